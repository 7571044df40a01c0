//! The server's operating-system calls about peers and identity: the real owner of a
//! loopback TCP connection, the process's effective ids, the host name.
//!
//! **Why the socket table.** TCP carries no kernel peer credentials (`SO_PEERCRED` is
//! for Unix sockets), and the `native` credential a client sends is only a claim any
//! local user can forge (docs/design.md §8). On one host both ends of a loopback connection
//! are sockets in the same kernel, and the kernel's socket table records who created
//! each: `/proc/net/tcp` (and `tcp6`, for IPv6 sockets, including v4-mapped ones) has
//! one line per socket with its local and remote address and its owner's uid. The
//! client's socket is the line whose *local* address is the peer address the server
//! sees and whose *remote* address is the server's own end. [`peer_uid`] reads it.
//!
//! The lookup asks the kernel for exactly that socket through `sock_diag` netlink
//! ([`sock_diag_uid`]: one request, one answer, microseconds); the text tables are
//! the fallback ([`proc_table_uid`]), slower because the kernel prints every socket,
//! `TIME_WAIT` ones included (about 5 ms per thousand).
//!
//! A socket keeps its owner's uid for as long as it is a full socket, which includes
//! `FIN_WAIT` after the client closed: only `TIME_WAIT` entries show uid 0, and a
//! connection reaches `TIME_WAIT` on the client's side only after the server closed it
//! too, so a connection the server still holds always shows its real owner.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The socket tables [`peer_uid`] reads, IPv4 first.
pub const SOCKET_TABLES: [&str; 2] = ["/proc/net/tcp", "/proc/net/tcp6"];

/// The uid owning the client socket of a TCP connection on this host, given the
/// server's end `ours` (the accepted socket's local address) and the client's end
/// `peer` (its peer address): asked of `sock_diag` ([`sock_diag_uid`]), else read
/// from the kernel's socket tables ([`proc_table_uid`]).
///
/// # Errors
/// [`io::ErrorKind::NotFound`] when no table has the client's socket (a peer on
/// another host, or a socket that is gone); the error of reading a table when
/// neither can be read.
pub fn peer_uid(ours: SocketAddr, peer: SocketAddr) -> io::Result<u32> {
    match sock_diag_uid(ours, peer) {
        Ok(uid) => Ok(uid),
        Err(_) => proc_table_uid(ours, peer),
    }
}

/// `sock_diag` netlink constants (linux/sock_diag.h, linux/netlink.h): stable ABI.
const NETLINK_SOCK_DIAG: libc::c_int = 4;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLM_F_REQUEST: u16 = 1;
const NLMSG_ERROR: u16 = 2;
const NLMSG_HDRLEN: usize = 16;
/// `struct inet_diag_req_v2`: family, protocol, ext, pad, states, then the socket id.
const REQ_LEN: usize = 8 + SOCKID_LEN;
/// `struct inet_diag_sockid`: sport, dport (big-endian), src[4], dst[4], if,
/// cookie[2].
const SOCKID_LEN: usize = 48;
/// `struct inet_diag_msg` up to and including `idiag_uid`: family, state, timer,
/// retrans, the socket id, expires, rqueue, wqueue, uid.
const MSG_UID_END: usize = 4 + SOCKID_LEN + 16;

/// The uid owning the client socket of a loopback TCP connection (see [`peer_uid`]),
/// asked of the kernel through `sock_diag` netlink: one exact lookup of the
/// client's socket by its four addresses (`SOCK_DIAG_BY_FAMILY` without
/// `NLM_F_DUMP`). IPv4 only, IPv4-mapped IPv6 addresses included.
///
/// # Errors
/// The OS error of the netlink socket; [`io::ErrorKind::NotFound`] when the kernel
/// has no such connection (it answers that none is, or answers about another socket:
/// one listening on the client's port); [`io::ErrorKind::InvalidData`] for an answer
/// that does not parse, or an address that is not IPv4.
pub fn sock_diag_uid(ours: SocketAddr, peer: SocketAddr) -> io::Result<u32> {
    sock_diag_owner(ours, peer).map(|(uid, _)| uid)
}

/// The uid owning the client socket of a loopback TCP connection and the socket's
/// inode (what `/proc/PID/fd/N` of the process holding it links to,
/// `socket:[INODE]`), asked of `sock_diag` as [`sock_diag_uid`] does.
///
/// # Errors
/// As [`sock_diag_uid`].
pub fn sock_diag_owner(ours: SocketAddr, peer: SocketAddr) -> io::Result<(u32, u32)> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let (SocketAddr::V4(ours), SocketAddr::V4(peer)) = (canonical(ours), canonical(peer)) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "sock_diag lookup of a non-IPv4 connection",
        ));
    };
    // The request: a netlink header, then inet_diag_req_v2 naming the client's
    // socket (its source is the peer's end, its destination ours).
    let mut req = [0u8; NLMSG_HDRLEN + REQ_LEN];
    let total = req.len() as u32;
    req[0..4].copy_from_slice(&total.to_ne_bytes());
    req[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    req[6..8].copy_from_slice(&NLM_F_REQUEST.to_ne_bytes());
    req[8..12].copy_from_slice(&1u32.to_ne_bytes()); // sequence number
    let r = NLMSG_HDRLEN;
    req[r] = libc::AF_INET as u8;
    req[r + 1] = libc::IPPROTO_TCP as u8;
    req[r + 4..r + 8].copy_from_slice(&u32::MAX.to_ne_bytes()); // every state
    let id = r + 8;
    req[id..id + 2].copy_from_slice(&peer.port().to_be_bytes());
    req[id + 2..id + 4].copy_from_slice(&ours.port().to_be_bytes());
    req[id + 4..id + 8].copy_from_slice(&peer.ip().octets());
    req[id + 20..id + 24].copy_from_slice(&ours.ip().octets());
    req[id + 40..id + 48].copy_from_slice(&[0xff; 8]); // INET_DIAG_NOCOOKIE
    // SAFETY: socket() takes no pointers; a non-negative result is a new descriptor
    // that nothing else owns.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just created and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: the pointer and length describe `req`, which outlives the call; a
    // netlink socket needs no destination address (the kernel is the default).
    let sent = unsafe { libc::send(fd.as_raw_fd(), req.as_ptr().cast(), req.len(), 0) };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = [0u8; 1024];
    // The kernel answers while handling the send, so the answer is queued already:
    // never wait for it.
    // SAFETY: the pointer and length describe `buf`, which outlives the call; recv
    // writes at most that many bytes.
    let n = unsafe {
        libc::recv(
            fd.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    parse_diag_answer(
        buf.get(..n as usize).unwrap_or_default(),
        peer.port(),
        ours.port(),
    )
}

/// The uid and inode in the kernel's answer to [`sock_diag_owner`]'s request for the
/// socket `sport` → `dport`.
fn parse_diag_answer(ans: &[u8], sport: u16, dport: u16) -> io::Result<(u32, u32)> {
    let bad = |why: &str| io::Error::new(io::ErrorKind::InvalidData, format!("sock_diag: {why}"));
    let u16_at = |at: usize| {
        ans.get(at..at + 2)
            .map(|b| u16::from_ne_bytes([b[0], b[1]]))
    };
    let u32_at = |at: usize| {
        ans.get(at..at + 4)
            .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    };
    let kind = u16_at(4).ok_or_else(|| bad("a short answer"))?;
    if kind == NLMSG_ERROR {
        let errno = u32_at(NLMSG_HDRLEN).ok_or_else(|| bad("a short error"))? as i32;
        return Err(if errno == -libc::ENOENT {
            io::Error::new(io::ErrorKind::NotFound, "sock_diag: no such socket")
        } else {
            io::Error::from_raw_os_error(-errno)
        });
    }
    if kind != SOCK_DIAG_BY_FAMILY {
        return Err(bad("an answer of another type"));
    }
    let m = NLMSG_HDRLEN;
    let ports = ans.get(m + 4..m + 8).ok_or_else(|| bad("a short answer"))?;
    if ports != [sport.to_be_bytes(), dport.to_be_bytes()].concat() {
        // With no such connection, the kernel's lookup falls back to a socket
        // listening on the port asked for as the client's, and answers about it.
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "sock_diag: no such connection (the answer is about another socket)",
        ));
    }
    let uid = u32_at(m + MSG_UID_END - 4).ok_or_else(|| bad("a short answer"))?;
    // `idiag_inode` follows `idiag_uid`.
    let inode = u32_at(m + MSG_UID_END).ok_or_else(|| bad("a short answer"))?;
    Ok((uid, inode))
}

/// The uid owning the client socket of a TCP connection on this host (see
/// [`peer_uid`]), read from the kernel's socket tables ([`SOCKET_TABLES`]).
///
/// # Errors
/// As [`peer_uid`].
pub fn proc_table_uid(ours: SocketAddr, peer: SocketAddr) -> io::Result<u32> {
    let mut last_err = None;
    let mut read_any = false;
    for table in SOCKET_TABLES {
        match std::fs::read_to_string(table) {
            Ok(text) => {
                read_any = true;
                if let Some(uid) = find_owner(&text, ours, peer) {
                    return Ok(uid);
                }
            }
            Err(e) => last_err = Some(e),
        }
    }
    match (read_any, last_err) {
        (false, Some(e)) => Err(e),
        _ => Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no socket {peer} connected to {ours} in {SOCKET_TABLES:?}"),
        )),
    }
}

/// The uid of the socket in `table` (the text of `/proc/net/tcp` or `tcp6`) whose
/// local address is `peer` and remote address is `ours`; `None` when no line has it
/// or the lines cannot be read. IPv4-mapped IPv6 addresses match their IPv4 form.
pub fn find_owner(table: &str, ours: SocketAddr, peer: SocketAddr) -> Option<u32> {
    let (ours, peer) = (canonical(ours), canonical(peer));
    table.lines().skip(1).find_map(|line| {
        let mut f = line.split_whitespace();
        let local = parse_addr(f.nth(1)?)?;
        let remote = parse_addr(f.next()?)?;
        if canonical(local) != peer || canonical(remote) != ours {
            return None;
        }
        // st, tx:rx, tr:when, retrnsmt, then uid.
        f.nth(4)?.parse().ok()
    })
}

/// `addr` with an IPv4-mapped IPv6 address as its IPv4 form.
fn canonical(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), addr.port()),
            None => addr,
        },
        IpAddr::V4(_) => addr,
    }
}

/// One address of the table: `HEX:PORT`, the address as 8 (IPv4) or 32 (IPv6) hex
/// digits of 32-bit words in the kernel's byte order (this host's), the port as 4 hex
/// digits.
fn parse_addr(field: &str) -> Option<SocketAddr> {
    let (ip, port) = field.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |s: &str| u32::from_str_radix(s, 16).ok().map(u32::to_ne_bytes);
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(ip)?)),
        32 => {
            let mut b = [0u8; 16];
            for (i, chunk) in b.chunks_exact_mut(4).enumerate() {
                chunk.copy_from_slice(&word(ip.get(i * 8..i * 8 + 8)?)?);
            }
            IpAddr::V6(Ipv6Addr::from(b))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

pub use crate::os::{effective_ids, short_hostname};

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn the_client_socket_of_a_real_loopback_connection_is_owned_by_this_process_uid() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server_end, peer) = listener.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        let ours = server_end.local_addr().unwrap();
        let me = effective_ids().0;
        assert_eq!(peer_uid(ours, peer).unwrap(), me);
        assert_eq!(sock_diag_uid(ours, peer).unwrap(), me);
        assert_eq!(proc_table_uid(ours, peer).unwrap(), me);
        // The server's own end is not the client's socket: swapped ends name the
        // accepted socket, which this process owns too, but a wrong port finds nothing.
        let wrong = SocketAddr::new(peer.ip(), peer.port().wrapping_add(1).max(1));
        for e in [
            peer_uid(ours, wrong).unwrap_err(),
            sock_diag_uid(ours, wrong).unwrap_err(),
            proc_table_uid(ours, wrong).unwrap_err(),
        ] {
            assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
        }
    }

    #[test]
    fn a_connection_from_a_port_where_a_socket_listens_is_not_found() {
        // The kernel's exact lookup falls back to a socket listening on the port
        // asked for as the client's: its answer about that listener means that no
        // such connection exists (seen when a test elsewhere listened on the port).
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server_end, _) = listener.accept().unwrap();
        let ours = server_end.local_addr().unwrap();
        let other = TcpListener::bind("127.0.0.1:0").unwrap();
        let from_listener = other.local_addr().unwrap();
        for e in [
            peer_uid(ours, from_listener).unwrap_err(),
            sock_diag_uid(ours, from_listener).unwrap_err(),
            proc_table_uid(ours, from_listener).unwrap_err(),
        ] {
            assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
        }
        drop(client);
    }

    #[test]
    fn a_socket_created_under_another_fsuid_is_owned_by_that_uid() {
        if effective_ids().0 != 0 {
            println!("NOTICE: not root: cannot create a socket for another uid, skipping");
            return;
        }
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        // A socket's owner is the creating thread's file-system uid; setfsuid changes
        // only this thread's, and only for the socket's creation.
        let client = std::thread::spawn(move || {
            // SAFETY: setfsuid takes an id and touches no memory; it affects only
            // this thread, which restores it below.
            let before = unsafe { libc::setfsuid(65534) };
            let s = TcpStream::connect(addr);
            // SAFETY: as above.
            unsafe { libc::setfsuid(before as libc::uid_t) };
            s.unwrap()
        })
        .join()
        .unwrap();
        let (server_end, peer) = listener.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        let ours = server_end.local_addr().unwrap();
        assert_eq!(sock_diag_uid(ours, peer).unwrap(), 65534);
        assert_eq!(proc_table_uid(ours, peer).unwrap(), 65534);
        assert_eq!(peer_uid(ours, peer).unwrap(), 65534);
    }

    #[test]
    fn a_table_line_is_matched_by_the_clients_local_and_the_servers_remote_address() {
        // 127.0.0.1:40000 -> 127.0.0.1:5000, owned by uid 1000; the server's accepted
        // end (5000 -> 40000) by uid 0.
        let lo = u32::from_ne_bytes([127, 0, 0, 1]);
        let table = format!(
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
             \x20  0: {lo:08X}:1388 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1\n\
             \x20  1: {lo:08X}:1388 {lo:08X}:9C40 01 00000000:00000000 00:00000000 00000000     0        0 2 1\n\
             \x20  2: {lo:08X}:9C40 {lo:08X}:1388 01 00000000:00000000 00:00000000 00000000  1000        0 3 1\n"
        );
        let server: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let client: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        assert_eq!(find_owner(&table, server, client), Some(1000));
        assert_eq!(find_owner(&table, client, server), Some(0));
        let other: SocketAddr = "127.0.0.1:40001".parse().unwrap();
        assert_eq!(find_owner(&table, server, other), None);
    }

    #[test]
    fn an_ipv4_mapped_tcp6_line_matches_the_ipv4_connection() {
        // ::ffff:127.0.0.1 as four host-order words.
        let words = [
            0u32,
            0,
            u32::from_ne_bytes([0, 0, 0xff, 0xff]),
            u32::from_ne_bytes([127, 0, 0, 1]),
        ];
        let ip: String = words.iter().map(|w| format!("{w:08X}")).collect();
        let table = format!(
            "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
             \x20  0: {ip}:9C40 {ip}:1388 01 00000000:00000000 00:00000000 00000000  65534        0 3 1\n"
        );
        let server: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let client: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        assert_eq!(find_owner(&table, server, client), Some(65534));
    }

    #[test]
    fn malformed_table_lines_match_nothing() {
        let server: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let client: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        for table in [
            "",
            "header\n",
            "header\n 0: zz:1 yy:2 01\n",
            "h\n 0: 0100007F:9C40 0100007F:1388 01 a b c d x\n",
        ] {
            assert_eq!(find_owner(table, server, client), None, "{table:?}");
        }
    }

    #[test]
    fn the_short_hostname_has_no_domain() {
        let h = short_hostname();
        assert!(!h.is_empty() && !h.contains('.'), "{h}");
    }
}
