//! No panic crosses the C ABI (docs/design.md §6, docs/conventions.md rule 15): every `extern "C"`
//! function of the library runs its whole body inside `status_boundary` or `value_boundary`
//! (`src/boundary.rs`), which turn a panic into `PMIX_ERROR` or a fallback value.
//! Checked on the source, so a new function written without one (as
//! `PMIx_Get_version` once was) fails here, and every function the headers export must
//! be one of those checked.

use std::path::Path;

/// `text` with the contents of comments and string literals blanked (same length, so
/// positions match), leaving the code's brackets to count.
fn code_only(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                out[i] = b' ';
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            while i < b.len() && !b[i..].starts_with(b"*/") {
                out[i] = b' ';
                i += 1;
            }
            out[i..(i + 2).min(b.len())].fill(b' ');
            i += 2;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    out[i] = b' ';
                    i += 1;
                }
                out[i] = b' ';
                i += 1;
            }
            i += 1;
        } else {
            i += 1;
        }
    }
    out
}

/// The index of the bracket closing the one at `open`.
fn matching(code: &[u8], open: usize) -> Option<usize> {
    let (o, c) = (code[open], if code[open] == b'(' { b')' } else { b'}' });
    let mut depth = 0usize;
    for (k, &ch) in code.iter().enumerate().skip(open) {
        if ch == o {
            depth += 1;
        } else if ch == c {
            depth -= 1;
            if depth == 0 {
                return Some(k);
            }
        }
    }
    None
}

/// Every named `extern "C" fn` in `text`, with whether its body is one boundary call.
fn functions(text: &str) -> Vec<(String, bool)> {
    let code = code_only(text);
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("extern \"C\" fn ") {
        let name_at = from + at + "extern \"C\" fn ".len();
        from = name_at;
        let name: String = text[name_at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        // The body: the first `{` after the parameter list.
        let params = name_at + text[name_at..].find('(').expect("a parameter list");
        let params_end = matching(&code, params).expect("closed parameters");
        let body = params_end + text[params_end..].find('{').expect("a body");
        let body_end = matching(&code, body).expect("a closed body");
        let inner = std::str::from_utf8(&code[body + 1..body_end]).unwrap();
        let start = body + 1 + (inner.len() - inner.trim_start().len());
        let inner = inner.trim();
        let guarded = ["status_boundary(", "value_boundary("]
            .iter()
            .find(|b| inner.starts_with(**b))
            .is_some_and(|b| {
                let open = start + b.len() - 1;
                matching(&code, open).is_some_and(|close| {
                    std::str::from_utf8(&code[close + 1..body_end])
                        .unwrap()
                        .trim()
                        .trim_start_matches(';')
                        .trim()
                        .is_empty()
                })
            });
        found.push((name, guarded));
    }
    found
}

#[test]
fn the_checker_tells_a_guarded_body_from_an_unguarded_one() {
    let src = r#"
        pub extern "C" fn A() -> i32 { status_boundary(|| { let s = "){"; Ok(()) }) }
        pub extern "C" fn B() -> *const c_char {
            // a comment with value_boundary( in it
            VERSION.as_ptr()
        }
        pub extern "C" fn C() { value_boundary((), || ()); after(); }
        type T = Option<unsafe extern "C" fn(i32)>;
    "#;
    assert_eq!(
        functions(src),
        [("A".into(), true), ("B".into(), false), ("C".into(), false)]
    );
}

#[test]
fn every_extern_c_function_runs_inside_a_panic_boundary() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for (name, guarded) in functions(&text) {
            assert!(
                guarded,
                "{name} in {}: its body is not one status_boundary/value_boundary call",
                path.display()
            );
            all.push(name);
        }
    }
    // Every call the headers export is among the functions checked.
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let mut exported = 0;
    for h in ["pmix.h", "pmix_common.h", "pmix_tool.h"] {
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
                    all.iter().any(|n| n == name),
                    "{name} is exported by include/{h} but no extern \"C\" fn defines it"
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
            all.iter().any(|n| n == name),
            "{name} is declared by include/pmix_ft.h but no extern \"C\" fn defines it"
        );
    }
}
