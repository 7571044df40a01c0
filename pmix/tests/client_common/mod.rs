//! Our client started in the test's own process against a `Server` of it: the
//! environment the server gives a rank, and the connected instance.
#![allow(dead_code, unreachable_pub)]

use pmix::{Connect, InitOptions, Pmix, Role, Server, ServerEnv};

/// Rank `rank` of `ns`'s environment as `server` gives it, the variables of `extra`
/// first (the first of a name counts, so they replace the server's).
pub fn env_of(server: &Server, ns: &str, rank: u32, extra: &[(&str, &str)]) -> ServerEnv {
    let mut vars: Vec<(String, String)> = extra
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    vars.extend(server.client_env(ns, rank));
    ServerEnv::from_pairs(&vars)
        .unwrap()
        .expect("a launched client's environment")
}

/// Our client, connected to the server `env` names.
pub fn client(env: ServerEnv) -> Pmix {
    Pmix::init(
        Role::Client,
        InitOptions {
            connect: Connect::To(env),
            ..InitOptions::default()
        },
    )
    .unwrap()
}
