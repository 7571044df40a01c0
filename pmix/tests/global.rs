//! The process-wide instance of the C ABI: reference-counted init, `PMIX_ERR_INIT`
//! before init and after the last finalize. One test, so nothing else in this process
//! touches the global instance at the same time.

use pmix::{Error, InitOptions, PmixError, Role, Status, global};

#[test]
fn init_is_reference_counted_and_init_errors_bracket_it() {
    assert!(!global::is_initialized());
    assert!(matches!(global::get(), Err(Error::Init)));
    assert_eq!(
        global::finalize("PMIx_Finalize").unwrap_err().status(),
        Status::ERR_INIT
    );

    let a = global::init(Role::Client, InitOptions::default(), "PMIx_Init").unwrap();
    // A second init keeps the first instance and its role.
    let b = global::init(Role::Tool, InitOptions::default(), "PMIx_tool_init").unwrap();
    assert_eq!(b.role(), Role::Client);
    assert_eq!(a.proc_id(), b.proc_id());
    assert!(
        a.proc_id()
            .nspace
            .to_string()
            .starts_with("pmix-rs.singleton.")
    );
    assert!(global::is_initialized());

    global::finalize("PMIx_Finalize").unwrap();
    assert!(global::is_initialized(), "one reference left");
    assert!(!a.is_finalized());
    global::finalize("PMIx_tool_finalize").unwrap();
    assert!(!global::is_initialized());
    assert!(a.is_finalized());
    assert!(matches!(global::get(), Err(Error::Init)));

    // A fresh instance after the last finalize.
    let c = global::init(Role::Tool, InitOptions::default(), "PMIx_tool_init").unwrap();
    assert_eq!(c.role(), Role::Tool);
    assert!(c.proc_id().nspace.to_string().starts_with("pmix-rs.tool."));

    // Finalize from a callback is refused and changes nothing.
    let (tx, rx) = std::sync::mpsc::channel();
    c.post(move || {
        tx.send(global::finalize("PMIx_tool_finalize")).unwrap();
    })
    .unwrap();
    let r = rx.recv().unwrap();
    assert!(matches!(
        r,
        Err(Error::WouldBlock {
            call: "PMIx_tool_finalize"
        })
    ));
    assert!(global::is_initialized());
    global::finalize("PMIx_tool_finalize").unwrap();
    assert!(!global::is_initialized());
}
