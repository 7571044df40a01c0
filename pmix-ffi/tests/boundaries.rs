//! No panic crosses the C ABI (docs/design.md §6, docs/conventions.md rule 15): every
//! `extern "C"` function of the library is defined through `export!` or `callback!`
//! (`src/boundary.rs`), which put its body inside `status_boundary` or
//! `value_boundary` by construction. Checked here on the source (`src/` and its
//! folders): no `extern "C" fn` (nor a `no_mangle` / `export_name` symbol) is written
//! anywhere else, and every function the headers export is defined by an `export!`.

use std::path::Path;

/// `text` without its comments (`// …` to the end of the line, `/* … */`); string
/// literals are left alone, which can only make a check stricter.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |k| &after[k..]);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |k| &after[k + 2..]);
            out.push(' ');
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// `code` with every run of whitespace one space, so `extern  "C"\nfn` reads as
/// `extern "C" fn`.
fn squeeze(code: &str) -> String {
    code.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The names of the functions `code` defines with an `extern` ABI (`extern fn`,
/// `extern "C" fn`, `extern "C-unwind" fn`, …) by hand: everything but a function
/// pointer type (`extern "C" fn(`) and the macros' own `extern "C" fn $name`.
fn hand_written_externs(code: &str) -> Vec<String> {
    let code = squeeze(code);
    let mut found = Vec::new();
    for (at, _) in code.match_indices("extern ") {
        let mut after = &code[at + "extern ".len()..];
        if after.starts_with('"') {
            let Some(close) = after[1..].find('"') else {
                continue;
            };
            after = after[close + 2..].trim_start();
        }
        let Some(after) = after.strip_prefix("fn") else {
            continue; // `extern crate`, `extern "C" {`, ….
        };
        let after = after.trim_start();
        if after.starts_with('(') || after.starts_with('$') {
            continue;
        }
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        found.push(name);
    }
    found
}

/// The names `code` defines through `macro!` (the first `fn NAME` after each
/// `macro! {`).
fn defined_through(code: &str, macro_name: &str) -> Vec<String> {
    let code = squeeze(code);
    let open = format!("{macro_name}! {{");
    code.match_indices(&open)
        .filter_map(|(at, _)| {
            let after = &code[at + open.len()..];
            let f = after.find(" fn ")?;
            let name: String = after[f + 4..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            Some(name)
        })
        .collect()
}

/// Every `.rs` file under `dir`, its folders included.
fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn the_checker_finds_hand_written_extern_functions() {
    let src = r#"
        pub unsafe extern "C" fn A() -> i32 { 0 }
        extern
            "C" fn B() {}
        pub extern fn C() {}
        extern "C-unwind" fn D() {}
        // pub extern "C" fn E() {}
        /* extern "C" fn F() {} */
        type T = Option<unsafe extern "C" fn(i32)>;
        type U = unsafe extern "C" fn (i32);
        macro_rules! m { ($name:ident) => { $($qual)* extern "C" fn $name() {} } }
        extern "C" { fn declared(); }
        export! {
            /// Docs.
            unsafe fn PMIx_G(x: i32) -> pmix_status_t { Ok(()) }
        }
    "#;
    let code = strip_comments(src);
    assert_eq!(hand_written_externs(&code), ["A", "B", "C", "D"]);
    assert_eq!(defined_through(&code, "export"), ["PMIx_G"]);
}

#[test]
fn every_extern_c_function_is_defined_through_the_boundary_macros() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut exports = Vec::new();
    let mut callbacks = Vec::new();
    let files = rust_files(&src);
    assert!(
        files.len() >= 20,
        "only {} source files under src/",
        files.len()
    );
    for path in files {
        let code = strip_comments(&std::fs::read_to_string(&path).unwrap());
        let by_hand = hand_written_externs(&code);
        assert!(
            by_hand.is_empty(),
            "{}: {by_hand:?} defined as extern fn by hand, not through export! or callback! \
             (src/boundary.rs), so nothing puts their bodies inside the panic boundary",
            path.display()
        );
        if path.file_name().is_some_and(|n| n != "boundary.rs") {
            for attr in ["no_mangle", "export_name"] {
                assert!(
                    !code.contains(attr),
                    "{}: `{attr}` outside the boundary macros",
                    path.display()
                );
            }
        }
        exports.extend(defined_through(&code, "export"));
        callbacks.extend(defined_through(&code, "callback"));
    }
    assert!(callbacks.len() >= 4, "callbacks: {callbacks:?}");
    // Every call the headers export is defined by an export!.
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let mut exported = 0;
    for h in ["pmix.h", "pmix_common.h", "pmix_tool.h", "pmix_server.h"] {
        let text = std::fs::read_to_string(include.join(h)).unwrap();
        for decl in text.split("PMIX_EXPORT").skip(1) {
            let Some(name) = decl
                .split('(')
                .next()
                .and_then(|head| head.split([' ', '*', '\n']).rfind(|w| !w.is_empty()))
            else {
                continue;
            };
            if name.starts_with("PMIx_") {
                exported += 1;
                assert!(
                    exports.iter().any(|n| n == name),
                    "{name} is exported by include/{h} but no export! defines it"
                );
            }
        }
    }
    assert!(exported >= 20, "only {exported} exported calls found");
    // pmix_ft.h (no PMIX_EXPORT): every pmixrs_ft_ call it declares.
    let text = std::fs::read_to_string(include.join("pmix_ft.h")).unwrap();
    let declared: Vec<&str> = text
        .split("pmix_status_t ")
        .skip(1)
        .filter_map(|d| d.split('(').next())
        .filter(|n| n.starts_with("pmixrs_ft_"))
        .collect();
    assert!(declared.len() >= 15, "{declared:?}");
    for name in declared {
        assert!(
            exports.iter().any(|n| n == name),
            "{name} is declared by include/pmix_ft.h but no export! defines it"
        );
    }
}
