//! Where a launched client finds its server: the variables an OpenPMIx 4.2 client
//! reads (docs/wire.md §2.1) and the URI syntax (§2.3).

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use pmix_core::Status;
use pmix_wire::BufferType;

use crate::error::Error;

/// The URI variables, in the order an OpenPMIx 4.2 client tries them; the first one
/// set is used.
pub const URI_VARS: [&str; 5] = [
    "PMIX_SERVER_URI41",
    "PMIX_SERVER_URI4",
    "PMIX_SERVER_URI3",
    "PMIX_SERVER_URI21",
    "PMIX_SERVER_URI2",
];

/// The longest namespace, in bytes (`PMIX_MAX_NSLEN`): the core's one definition.
pub use pmix_core::MAX_NSLEN;

/// What a launched client needs to connect: its identity and its server's address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerEnv {
    /// `PMIX_NAMESPACE`.
    pub nspace: String,
    /// `PMIX_RANK`.
    pub rank: u32,
    /// The server's address, from the first URI variable set.
    pub addr: SocketAddr,
    /// The server's own name, the URI's part before `;` (recorded, never sent).
    pub server: String,
    /// Which URI variable gave the address.
    pub uri_var: &'static str,
    /// `PMIX_BFROP_BUFFER_TYPE`: the buffer type the server uses (non-described when
    /// unset, the release-build default).
    pub buffer_type: BufferType,
    /// `PMIX_HOSTNAME`, when set.
    pub hostname: Option<String>,
    /// `PMIX_RS_SERVER_FD` (`FD:PID`): the inherited end of a socket pair the
    /// launcher (pid `PID`) made for this process
    /// ([`Server::client_channel`](crate::server::Server::client_channel)), used
    /// instead of connecting when it is that socket; `None` when unset or malformed.
    pub channel: Option<(i32, u32)>,
    /// The server offers the node store (`pxns` in `PMIX_GDS_MODULE`) and
    /// `PMIX_MCA_gds`, when set, does not leave it out: this client announces
    /// [`pmix_wire::nodestore::GDS_NAME`] and maps its job information from the
    /// segment its REQ names (docs/serving.md §5).
    pub node_store: bool,
}

impl ServerEnv {
    /// Reads this process's environment ([`ServerEnv::from_vars`]).
    ///
    /// # Errors
    /// As [`ServerEnv::from_vars`].
    pub fn from_env() -> Result<Option<ServerEnv>, Error> {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// Reads the variables of the list `vars` (name, value; the first of a name
    /// counts), such as a server's `client_env` for a rank gives: a client started in
    /// the server's own process, or a test's.
    ///
    /// # Errors
    /// As [`ServerEnv::from_vars`].
    pub fn from_pairs(vars: &[(String, String)]) -> Result<Option<ServerEnv>, Error> {
        Self::from_vars(|k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    }

    /// Reads the variables through `get`: `None` when the process is not a launched
    /// client (no `PMIX_NAMESPACE`, or no URI variable: a singleton, as OpenPMIx).
    ///
    /// # Errors
    /// `PMIX_ERR_DATA_VALUE_NOT_FOUND` (as OpenPMIx) when `PMIX_RANK` is missing or
    /// not a rank; [`Error::BadParam`] for an empty or over-long namespace, a URI that
    /// is not `<name>;tcp4://a.b.c.d:port` or `<name>;tcp6://[addr]:port`, or an
    /// unknown `PMIX_BFROP_BUFFER_TYPE`.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Option<ServerEnv>, Error> {
        let Some(nspace) = get("PMIX_NAMESPACE") else {
            return Ok(None);
        };
        let Some((uri_var, uri)) = URI_VARS.iter().find_map(|v| get(v).map(|u| (*v, u))) else {
            return Ok(None);
        };
        if nspace.is_empty() || nspace.len() > MAX_NSLEN || nspace.contains('\0') {
            return Err(Error::BadParam(
                format!("PMIX_NAMESPACE must be 1 to {MAX_NSLEN} bytes without NUL").into(),
            ));
        }
        let rank = get("PMIX_RANK")
            .and_then(|r| r.trim().parse::<u32>().ok())
            .filter(|r| *r < pmix_wire::Rank::LOCAL_NODE.0)
            .ok_or_else(|| Error::Status {
                status: Status::ERR_DATA_VALUE_NOT_FOUND,
                why: "PMIX_RANK is missing or not a rank".into(),
            })?;
        let (server, addr) = parse_uri(&uri).ok_or_else(|| {
            Error::BadParam(format!("{uri_var}={uri:?} is not a PMIx URI").into())
        })?;
        let buffer_type = match get("PMIX_BFROP_BUFFER_TYPE").as_deref() {
            None | Some("PMIX_BFROP_BUFFER_NON_DESC") => BufferType::NonDescribed,
            Some("PMIX_BFROP_BUFFER_FULLY_DESC") => BufferType::FullyDescribed,
            Some(other) => {
                return Err(Error::BadParam(
                    format!("PMIX_BFROP_BUFFER_TYPE={other:?} is not a buffer type").into(),
                ));
            }
        };
        Ok(Some(ServerEnv {
            nspace,
            rank,
            addr,
            server: server.to_owned(),
            uri_var,
            buffer_type,
            hostname: get("PMIX_HOSTNAME").filter(|h| !h.is_empty()),
            channel: get(crate::os::SERVER_FD_VAR).and_then(|v| parse_channel(&v)),
            node_store: offers_node_store(get("PMIX_GDS_MODULE"), get("PMIX_MCA_gds")),
        }))
    }
}

impl ServerEnv {
    /// The server a tool is pointed at: the first URI variable of [`URI_VARS`] read
    /// through `get`, `None` without one. A tool started by that server (with
    /// `PMIX_NAMESPACE` and `PMIX_RANK`) keeps that identity
    /// ([`ServerEnv::with_launch_identity`]); any other gets one from the server.
    ///
    /// # Errors
    /// As [`ServerEnv::from_uri`].
    pub fn tool_from_vars(
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<ServerEnv>, Error> {
        match URI_VARS.iter().find_map(|v| get(v).map(|u| (*v, u))) {
            Some((var, uri)) => Ok(Some(Self::from_uri(&uri, var)?.with_launch_identity(get))),
            None => Ok(None),
        }
    }

    /// This server, for a tool started by it: the namespace and rank of
    /// `PMIX_NAMESPACE` and `PMIX_RANK` read through `get` when both are valid
    /// (unchanged otherwise: the server assigns the tool's identity).
    pub fn with_launch_identity(mut self, get: impl Fn(&str) -> Option<String>) -> ServerEnv {
        let nspace = get("PMIX_NAMESPACE")
            .filter(|n| !n.is_empty() && n.len() <= MAX_NSLEN && !n.contains('\0'));
        let rank = get("PMIX_RANK")
            .and_then(|r| r.trim().parse::<u32>().ok())
            .filter(|r| *r < pmix_wire::Rank::LOCAL_NODE.0);
        if let (Some(n), Some(r)) = (nspace, rank) {
            self.nspace = n;
            self.rank = r;
        }
        self
    }

    /// A server named by its URI (`<name>;tcp4://a.b.c.d:port`, as `PMIX_SERVER_URI`
    /// gives it to a tool), for a tool: no namespace or rank (the server assigns
    /// them), non-described buffers; `var` names where the URI came from.
    ///
    /// # Errors
    /// [`Error::BadParam`] for a URI that is not one.
    pub fn from_uri(uri: &str, var: &'static str) -> Result<ServerEnv, Error> {
        let (server, addr) = parse_uri(uri)
            .ok_or_else(|| Error::BadParam(format!("{var}={uri:?} is not a PMIx URI").into()))?;
        Ok(ServerEnv {
            nspace: String::new(),
            rank: 0,
            addr,
            server: server.to_owned(),
            uri_var: var,
            buffer_type: BufferType::NonDescribed,
            hostname: None,
            channel: None,
            node_store: false,
        })
    }
}

/// Whether `PMIX_MCA_pmix_client_get_verbose` (OpenPMIx's verbosity of its client's
/// gets) is above 0: then a get that asks the server prints libpmix2's line for it,
/// `[host:pid] [nspace,rank] REQUESTING DATA FROM SERVER FOR nspace:rank KEY key`, on
/// stderr. Read once.
pub(crate) fn get_verbose() -> bool {
    static VERBOSE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *VERBOSE.get_or_init(|| {
        std::env::var("PMIX_MCA_pmix_client_get_verbose")
            .ok()
            .and_then(|v| v.trim().parse::<i32>().ok())
            .is_some_and(|v| v > 0)
    })
}

/// [`ServerEnv::node_store`]: `offered` (`PMIX_GDS_MODULE`) names the node store,
/// and `selected` (`PMIX_MCA_gds`, OpenPMIx's choice of storage modules: a list, or
/// `^list` of those left out) does not leave it out.
fn offers_node_store(offered: Option<String>, selected: Option<String>) -> bool {
    let name = pmix_wire::nodestore::GDS_NAME;
    let listed = |list: &str| list.split(',').any(|m| m.trim() == name);
    offered.as_deref().is_some_and(listed)
        && match selected.as_deref().map(str::trim) {
            None | Some("") => true,
            Some(s) => match s.strip_prefix('^') {
                Some(excluded) => !listed(excluded),
                None => listed(s),
            },
        }
}

/// `FD:PID` of [`ServerEnv::channel`].
fn parse_channel(v: &str) -> Option<(i32, u32)> {
    let (fd, pid) = v.split_once(':')?;
    Some((fd.trim().parse().ok()?, pid.trim().parse().ok()?))
}

impl ServerEnv {
    /// [`ServerEnv::from_rendezvous`] with a tool's defaults, as `PMIx_tool_init`
    /// finds a server by `PMIX_SERVER_PIDINFO` / `PMIX_SERVER_NSPACE`: the host is
    /// `host` (`PMIX_HOSTNAME`) else this host's short name, the directory `dir`
    /// (`PMIX_SYSTEM_TMPDIR` given as an info) else the `PMIX_SYSTEM_TMPDIR`
    /// variable else the temporary directory.
    ///
    /// # Errors
    /// As [`ServerEnv::from_rendezvous`].
    pub fn find_rendezvous(
        dir: Option<PathBuf>,
        host: Option<&str>,
        tail: &str,
    ) -> Result<ServerEnv, Error> {
        let host = host.map_or_else(crate::os::short_hostname, str::to_owned);
        let dir = dir
            .or_else(|| std::env::var_os("PMIX_SYSTEM_TMPDIR").map(Into::into))
            .unwrap_or_else(std::env::temp_dir);
        ServerEnv::from_rendezvous(&dir, &host, tail)
    }

    /// The server whose rendezvous file is `pmix.<host>.tool.<tail>` (`tail` a
    /// server's pid or namespace, as `PMIX_SERVER_PIDINFO` / `PMIX_SERVER_NSPACE`
    /// name it), searched for in `dir` and its subdirectories down to 3 levels
    /// (OpenPMIx's servers put theirs in session directories under it), for a tool.
    /// The file's first line is the URI (docs/wire.md §2.4).
    ///
    /// # Errors
    /// [`Error::Unreach`] when no such file is found or it holds no URI.
    pub fn from_rendezvous(dir: &Path, host: &str, tail: &str) -> Result<ServerEnv, Error> {
        if tail.contains('/') || host.contains('/') {
            return Err(Error::Unreach(
                format!("no rendezvous file for {tail:?}: a name with '/'").into(),
            ));
        }
        let name = format!("pmix.{host}.tool.{tail}");
        let found = find_file(dir, &name, 3)
            .ok_or_else(|| Error::Unreach(format!("no {name} under {}", dir.display()).into()))?;
        let text = std::fs::read_to_string(&found)
            .map_err(|e| Error::Unreach(format!("{}: {e}", found.display()).into()))?;
        let uri = text.lines().next().unwrap_or_default().trim();
        ServerEnv::from_uri(uri, "PMIX_SERVER_PIDINFO")
            .map_err(|_| Error::Unreach(format!("{} holds no PMIx URI", found.display()).into()))
    }
}

/// `dir/name`, else the first `name` in `dir`'s subdirectories, `depth` levels down
/// at most (symbolic links not followed).
fn find_file(dir: &Path, name: &str, depth: u32) -> Option<PathBuf> {
    let here = dir.join(name);
    if here.is_file() {
        return Some(here);
    }
    if depth == 0 {
        return None;
    }
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    subdirs.sort();
    subdirs.iter().find_map(|d| find_file(d, name, depth - 1))
}

/// `<server name>;tcp4://a.b.c.d:port` or `<server name>;tcp6://[addr]:port` (brackets
/// optional): the name and the address.
pub fn parse_uri(uri: &str) -> Option<(&str, SocketAddr)> {
    let (name, rest) = uri.split_once(';')?;
    let (ip, port) = if let Some(a) = rest.strip_prefix("tcp4://") {
        let (ip, port) = a.rsplit_once(':')?;
        (ip.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)?, port)
    } else if let Some(a) = rest.strip_prefix("tcp6://") {
        let (ip, port) = a.rsplit_once(':')?;
        let ip = ip
            .strip_prefix('[')
            .and_then(|i| i.strip_suffix(']'))
            .unwrap_or(ip);
        (ip.parse::<std::net::Ipv6Addr>().ok().map(IpAddr::V6)?, port)
    } else {
        return None;
    };
    let port = port.parse::<u16>().ok().filter(|p| *p != 0)?;
    Some((name, SocketAddr::new(ip, port)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(kv: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            kv.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn the_node_store_is_used_where_offered_and_not_left_out_by_pmix_mca_gds() {
        let s = |v: &str| Some(v.to_owned());
        assert!(offers_node_store(s("pxns,hash"), None));
        assert!(offers_node_store(s("hash, pxns"), s("")));
        assert!(offers_node_store(s("pxns,hash"), s("pxns")));
        assert!(offers_node_store(s("pxns,hash"), s("^ds21,ds12")));
        assert!(!offers_node_store(s("pxns,hash"), s("hash")));
        assert!(!offers_node_store(s("pxns,hash"), s("^pxns")));
        // mpirun's offer, and none.
        assert!(!offers_node_store(s("ds21,ds12,hash"), None));
        assert!(!offers_node_store(None, s("pxns")));
    }

    #[test]
    fn from_pairs_takes_the_first_value_of_a_name() {
        let pairs: Vec<(String, String)> = [
            ("PMIX_RANK", "1"),
            ("PMIX_NAMESPACE", "job"),
            ("PMIX_RANK", "2"),
            ("PMIX_SERVER_URI41", "srv.0;tcp4://127.0.0.1:5000"),
        ]
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
        let env = ServerEnv::from_pairs(&pairs).unwrap().unwrap();
        assert_eq!((env.nspace.as_str(), env.rank), ("job", 1));
        assert_eq!(ServerEnv::from_pairs(&pairs[..1]).unwrap(), None);
    }

    #[test]
    fn mpiruns_variables_give_the_first_uri_and_the_identity() {
        let env = ServerEnv::from_vars(vars(&[
            ("PMIX_NAMESPACE", "33947649"),
            ("PMIX_RANK", "3"),
            ("PMIX_SERVER_URI4", "33947648.0;tcp4://127.0.0.1:1"),
            ("PMIX_SERVER_URI41", "33947648.0;tcp4://127.0.0.1:56657"),
            ("PMIX_BFROP_BUFFER_TYPE", "PMIX_BFROP_BUFFER_NON_DESC"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(env.nspace, "33947649");
        assert_eq!(env.rank, 3);
        assert_eq!(env.addr, "127.0.0.1:56657".parse().unwrap());
        assert_eq!(env.server, "33947648.0");
        assert_eq!(env.uri_var, "PMIX_SERVER_URI41");
        assert_eq!(env.buffer_type, BufferType::NonDescribed);
    }

    #[test]
    fn without_a_namespace_or_a_uri_the_process_is_a_singleton() {
        assert_eq!(ServerEnv::from_vars(vars(&[])).unwrap(), None);
        let no_uri = [("PMIX_NAMESPACE", "a"), ("PMIX_RANK", "0")];
        assert_eq!(ServerEnv::from_vars(vars(&no_uri)).unwrap(), None);
    }

    #[test]
    fn a_missing_rank_is_data_value_not_found_and_a_bad_uri_bad_param() {
        use pmix_core::PmixError;
        let e = ServerEnv::from_vars(vars(&[
            ("PMIX_NAMESPACE", "a"),
            ("PMIX_SERVER_URI41", "s.0;tcp4://127.0.0.1:5"),
        ]))
        .unwrap_err();
        assert_eq!(e.status(), Status::ERR_DATA_VALUE_NOT_FOUND);
        for uri in [
            "s.0;tcp4://host:5",
            "s.0;tcp4://127.0.0.1:0",
            "s.0;unix:///x",
            "tcp4://127.0.0.1:5",
        ] {
            let e = ServerEnv::from_vars(vars(&[
                ("PMIX_NAMESPACE", "a"),
                ("PMIX_RANK", "0"),
                ("PMIX_SERVER_URI41", uri),
            ]))
            .unwrap_err();
            assert_eq!(e.status(), Status::ERR_BAD_PARAM, "{uri}");
        }
    }

    #[test]
    fn tcp6_uris_parse_with_or_without_brackets() {
        for uri in ["x;tcp6://[::1]:7", "x;tcp6://::1:7"] {
            assert_eq!(parse_uri(uri).unwrap().1, "[::1]:7".parse().unwrap());
        }
    }
}
