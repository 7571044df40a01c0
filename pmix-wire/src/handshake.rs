//! The connect handshake in both directions (docs/wire.md §3).
//!
//! The client opens with one [`ConnectMsg`]: a 16-byte header **in the sender's
//! host byte order** (little-endian: every x86-64 and aarch64 peer), then a body of
//! NUL-terminated strings, big-endian u32s and single bytes (§3.1). The server
//! answers with raw big-endian words: 8 bytes ([`ClientReply`]) for a launched
//! client (type flag 0), a longer [`ToolReply`] for tools, launchers and singletons
//! (§3.3). Frames follow ([`crate::frame`]).
//!
//! Decoding accepts only what [`ConnectMsg::encode`] writes, so every accepted
//! message re-encodes to the same bytes: the header's `pindex` must be −1, its tag
//! `0xffffffff` and its padding 0; strings must be UTF-8; the trailer is one of the
//! forms below.
//!
//! Versions: the version string is parsed ([`Version::parse`]) and checked
//! ([`Version::check_supported`]) where it stands, so an unsupported peer is a
//! typed [`ErrorKind::UnsupportedVersion`] naming both versions. A 2.0.x client stops
//! its message after the version string (the server then assumes bfrops `v20`);
//! we refuse it as unsupported at the version string, like every version before
//! 4.2.
//!
//! The tool/launcher trailer (a bfrops-packed `SIZE` and `INFO[]`, in the
//! connection's buffer type) is checked to decode when the message is decoded, and
//! kept as its exact bytes ([`Trailer::info`]); [`ConnectMsg::tool_info`] gives the
//! values, [`Trailer::with_info`] packs them.

use alloc::string::String;
use alloc::vec::Vec;

use crate::buf::{Reader, Writer};
use crate::error::{ErrorKind, WireError};
use crate::frame::Decoded;
use crate::limits::Limits;
use crate::types::BufferType;
use crate::value::{Info, Size};
use crate::version::{Codec, Version};

/// The length of the connect message's header, in bytes.
pub const CONNECT_HEADER_LEN: usize = 16;

/// The length of a [`ClientReply`], in bytes.
pub const CLIENT_REPLY_LEN: usize = 8;

/// The length of a fixed nspace field in a [`ToolReply`] (`PMIX_MAX_NSLEN + 1`).
pub const NSPACE_FIELD_LEN: usize = 256;

/// The bfrops module this codec speaks.
pub const BFROPS_V41: &str = "v41";

/// What kind of process connects: the connect message's type flag (docs/wire.md
/// §3.1), which decides its identity block and the server's reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PeerKind {
    /// 0: a client launched by this server (identity: nspace, rank).
    Client = 0,
    /// 1: a legacy tool (sent only by versions before 4; identity: uid, gid).
    LegacyTool = 1,
    /// 2: a legacy launcher (sent only by versions before 4; identity: uid, gid).
    LegacyLauncher = 2,
    /// 3: a self-started tool that needs an identifier (uid, gid).
    ToolNeedsId = 3,
    /// 4: a self-started tool with a caller-given identifier (uid, gid, nspace,
    /// rank).
    ToolGivenId = 4,
    /// 5: a tool started by a PMIx server, also its client (uid, gid, nspace, rank).
    ToolClient = 5,
    /// 6: a launcher that needs an identifier (uid, gid).
    LauncherNeedsId = 6,
    /// 7: a launcher with a given identifier (uid, gid, nspace, rank).
    LauncherGivenId = 7,
    /// 8: a launcher started by a server, also its client (uid, gid, nspace, rank).
    LauncherClient = 8,
    /// 9: a connected singleton, 4.2 (uid, gid, nspace, rank).
    Singleton = 9,
    /// 10: a scheduler with an identifier, 4.2.4 and later (uid, gid, nspace, rank).
    Scheduler = 10,
}

impl PeerKind {
    /// The kind of a type flag; `None` for a flag above 10.
    pub fn from_code(code: u8) -> Option<Self> {
        use PeerKind::*;
        Some(match code {
            0 => Client,
            1 => LegacyTool,
            2 => LegacyLauncher,
            3 => ToolNeedsId,
            4 => ToolGivenId,
            5 => ToolClient,
            6 => LauncherNeedsId,
            7 => LauncherGivenId,
            8 => LauncherClient,
            9 => Singleton,
            10 => Scheduler,
            _ => return None,
        })
    }

    /// The type flag on the wire.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// Whether the identity block is uid and gid only (flags 1, 2, 3, 6).
    pub fn ids_only(self) -> bool {
        matches!(
            self,
            PeerKind::LegacyTool
                | PeerKind::LegacyLauncher
                | PeerKind::ToolNeedsId
                | PeerKind::LauncherNeedsId
        )
    }

    /// Whether the server assigns an identifier, which its [`ToolReply`] then
    /// carries (flags 3 and 6). Legacy flags 1 and 2 come only from pre-4.0
    /// libraries, which this codec refuses; they count as not needing one.
    pub fn needs_identifier(self) -> bool {
        matches!(self, PeerKind::ToolNeedsId | PeerKind::LauncherNeedsId)
    }
}

/// The identity block of a connect message, as its [`PeerKind`] lays it out.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Identity {
    /// Flag 0: the client's nspace and rank.
    Client {
        /// The nspace.
        nspace: String,
        /// The rank.
        rank: u32,
    },
    /// Flags 1, 2, 3, 6: the tool's uid and gid.
    Ids {
        /// The type flag (one whose [`PeerKind::ids_only`] holds).
        kind: PeerKind,
        /// The user id.
        uid: u32,
        /// The group id.
        gid: u32,
    },
    /// Flags 4, 5, 7, 8, 9, 10: uid, gid, nspace and rank.
    Named {
        /// The type flag.
        kind: PeerKind,
        /// The user id.
        uid: u32,
        /// The group id.
        gid: u32,
        /// The nspace.
        nspace: String,
        /// The rank.
        rank: u32,
    },
}

impl Identity {
    /// The type flag this identity goes with.
    pub fn kind(&self) -> PeerKind {
        match self {
            Identity::Client { .. } => PeerKind::Client,
            Identity::Ids { kind, .. } | Identity::Named { kind, .. } => *kind,
        }
    }

    /// The nspace and rank, where the block carries them.
    pub fn proc(&self) -> Option<(&str, u32)> {
        match self {
            Identity::Client { nspace, rank } | Identity::Named { nspace, rank, .. } => {
                Some((nspace, *rank))
            }
            Identity::Ids { .. } => None,
        }
    }
}

/// What follows the gds module name (docs/wire.md §3.1 field 10).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Trailer {
    /// For tools and launchers: the bfrops-packed `SIZE ninfo` and `INFO[ninfo]`,
    /// as exact bytes (not decoded yet, see the module docs). Empty for clients.
    pub info: Vec<u8>,
    /// Whether the message ends with the stray zero byte of ≤ 4.2.2 libraries (an
    /// off-by-one in their length computation).
    pub stray_byte: bool,
}

impl Trailer {
    /// A tool's trailer carrying `info` (`SIZE n`, then `INFO[n]` when n > 0),
    /// packed in `buffer_type` (the connect message's), with or without the stray
    /// byte.
    ///
    /// # Errors
    /// [`ErrorKind::Unencodable`] when a value cannot be encoded.
    pub fn with_info(
        info: &[Info],
        buffer_type: BufferType,
        stray_byte: bool,
    ) -> Result<Trailer, WireError> {
        let mut w = Writer::new(buffer_type);
        w.pack_one(&Size(info.len() as u64));
        if !info.is_empty() {
            w.pack(info);
        }
        Ok(Trailer {
            info: w.finish()?,
            stray_byte,
        })
    }
}

/// `SIZE n`, then a pack of n INFO when n > 0 (what OpenPMIx's tool packs and its
/// server unpacks, §3.1 field 10).
fn read_tool_info(r: &mut Reader<'_>) -> Result<Vec<Info>, WireError> {
    let at = r.offset();
    let n = r.unpack_one::<Size>("the tool info count")?.0;
    if n == 0 {
        return Ok(Vec::new());
    }
    let n = r.bounded(n, r.limits().max_count, "the tool info count", at)?;
    r.unpack_n::<Info>(n, "the tool info")
}

/// The client's connect message (docs/wire.md §3.1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConnectMsg {
    /// The psec module (`native`).
    pub psec: String,
    /// The credential; `native` sends the effective uid and gid, each 4 bytes in the
    /// sender's host order ([`ConnectMsg::native_ids`]).
    pub credential: Vec<u8>,
    /// The type flag and its identity block.
    pub identity: Identity,
    /// The library's version (`4.2.2rc2`).
    pub version: Version,
    /// The bfrops module (`v41`).
    pub bfrops: String,
    /// The buffer type the client uses, and so the whole connection.
    pub buffer_type: BufferType,
    /// The gds module the client chose (`hash`, `ds21`, `ds12`).
    pub gds: String,
    /// What follows.
    pub trailer: Trailer,
}

impl ConnectMsg {
    /// Decodes the connect message at the start of `buf` (the bytes received so
    /// far): [`Decoded::Item`] with the message and the bytes it used (16 + the
    /// header's `nbytes`), or [`Decoded::NeedMore`] until the whole body is there
    /// (exact once `nbytes` is read). The header's other fields are checked once the
    /// whole message is there.
    /// Offsets in errors count from the start of `buf`.
    ///
    /// # Errors
    /// [`ErrorKind::TooLarge`] (offset 8) as soon as `nbytes` is readable and over
    /// [`Limits::max_handshake`]; [`ErrorKind::BadValue`] for a header whose pindex
    /// is not −1, tag not `0xffffffff` or padding not 0, an unknown type flag or
    /// buffer type, or a string that is not UTF-8; [`ErrorKind::Truncated`] for a
    /// field running past the body; [`ErrorKind::UnsupportedVersion`] at the version
    /// string; [`ErrorKind::TrailingBytes`] for a client's trailer other than
    /// nothing or one zero byte.
    pub fn decode(buf: &[u8], limits: &Limits) -> Result<Decoded<ConnectMsg>, WireError> {
        if buf.len() < 12 {
            return Ok(Decoded::NeedMore(CONNECT_HEADER_LEN - buf.len()));
        }
        let nbytes = le_u32(buf, 8);
        check_nbytes(nbytes, limits)?;
        let total = usize::try_from(nbytes)
            .ok()
            .and_then(|n| n.checked_add(CONNECT_HEADER_LEN))
            .ok_or_else(|| too_large(nbytes, limits))?;
        if buf.len() < total {
            return Ok(Decoded::NeedMore(total - buf.len()));
        }
        for (at, want, what) in [
            (0, u32::MAX, "the connect header's pindex (must be -1)"),
            (4, u32::MAX, "the connect header's tag (must be 0xffffffff)"),
            (12, 0, "the connect header's padding (must be 0)"),
        ] {
            if le_u32(buf, at) != want {
                return Err(WireError::new(
                    ErrorKind::BadValue {
                        what,
                        why: "a value a client never sends",
                    },
                    at,
                ));
            }
        }
        let Some(body) = buf.get(CONNECT_HEADER_LEN..total) else {
            return Ok(Decoded::NeedMore(total - buf.len()));
        };
        let r = Reader::new(body, BufferType::NonDescribed, *limits).with_base(CONNECT_HEADER_LEN);
        let item = Self::decode_body(r)?;
        Ok(Decoded::Item { item, used: total })
    }

    fn decode_body(mut r: Reader<'_>) -> Result<ConnectMsg, WireError> {
        let psec = cstr(&mut r, "the psec module")?;
        let at = r.offset();
        let len = be_u32_field(&mut r, "the credential length")?;
        let len = r.bounded(len.into(), r.limits().max_bytes, "the credential", at)?;
        let credential = r.take(len, "the credential")?.to_vec();
        let at = r.offset();
        let flag = r.u8("the type flag")?;
        let kind = PeerKind::from_code(flag).ok_or_else(|| {
            r.error_at(
                ErrorKind::BadValue {
                    what: "the type flag",
                    why: "a flag above 10",
                },
                at,
            )
        })?;
        let identity = if kind == PeerKind::Client {
            let nspace = cstr(&mut r, "the nspace")?;
            let rank = be_u32_field(&mut r, "the rank")?;
            Identity::Client { nspace, rank }
        } else {
            let uid = be_u32_field(&mut r, "the uid")?;
            let gid = be_u32_field(&mut r, "the gid")?;
            if kind.ids_only() {
                Identity::Ids { kind, uid, gid }
            } else {
                let nspace = cstr(&mut r, "the nspace")?;
                let rank = be_u32_field(&mut r, "the rank")?;
                Identity::Named {
                    kind,
                    uid,
                    gid,
                    nspace,
                    rank,
                }
            }
        };
        let at = r.offset();
        let text = cstr(&mut r, "the version string")?;
        let version = Version::parse(&text, at)?;
        version.check_supported(at)?;
        let bfrops = cstr(&mut r, "the bfrops module")?;
        let at = r.offset();
        let bt = r.u8("the buffer type")?;
        let buffer_type = BufferType::from_code(bt).ok_or_else(|| {
            r.error_at(
                ErrorKind::BadValue {
                    what: "the buffer type",
                    why: "neither 1 (non-described) nor 2 (fully described)",
                },
                at,
            )
        })?;
        let gds = cstr(&mut r, "the gds module")?;
        let rest = r.rest();
        let trailer = if kind == PeerKind::Client {
            match rest {
                [] => Trailer::default(),
                [0] => Trailer {
                    info: Vec::new(),
                    stray_byte: true,
                },
                _ => return Err(r.error(ErrorKind::TrailingBytes { len: rest.len() })),
            }
        } else if rest.is_empty() || rest == [0] {
            Trailer {
                info: Vec::new(),
                stray_byte: !rest.is_empty(),
            }
        } else {
            let start = r.offset();
            let mut t = Reader::new(rest, buffer_type, *r.limits()).with_base(start);
            read_tool_info(&mut t)?;
            let used = t.offset() - start;
            let (info, tail) = rest.split_at(used);
            match tail {
                [] | [0] => Trailer {
                    info: info.to_vec(),
                    stray_byte: !tail.is_empty(),
                },
                _ => return Err(t.error(ErrorKind::TrailingBytes { len: tail.len() })),
            }
        };
        Ok(ConnectMsg {
            psec,
            credential,
            identity,
            version,
            bfrops,
            buffer_type,
            gds,
            trailer,
        })
    }

    /// The message's bytes: the little-endian header, then the body.
    ///
    /// # Errors
    /// [`ErrorKind::Unencodable`] for a string holding a NUL, a credential longer
    /// than a u32 counts, an [`Identity`] whose kind does not match its variant, a
    /// client identity with trailer info, or a body longer than a u32 counts.
    pub fn encode(&self) -> Result<Vec<u8>, WireError> {
        let mut b = Vec::with_capacity(CONNECT_HEADER_LEN + 64 + self.trailer.info.len());
        b.extend_from_slice(&[0xff; 8]);
        b.extend_from_slice(&[0; 8]);
        put_cstr(&mut b, &self.psec)?;
        let len = u32::try_from(self.credential.len())
            .map_err(|_| unencodable("a credential longer than u32::MAX bytes"))?;
        b.extend_from_slice(&len.to_be_bytes());
        b.extend_from_slice(&self.credential);
        let kind = self.identity.kind();
        b.push(kind.code());
        match &self.identity {
            Identity::Client { nspace, rank } => {
                put_cstr(&mut b, nspace)?;
                b.extend_from_slice(&rank.to_be_bytes());
            }
            Identity::Ids { kind, uid, gid } => {
                if !kind.ids_only() {
                    return Err(unencodable(
                        "an uid/gid identity for a flag that needs a name",
                    ));
                }
                b.extend_from_slice(&uid.to_be_bytes());
                b.extend_from_slice(&gid.to_be_bytes());
            }
            Identity::Named {
                kind,
                uid,
                gid,
                nspace,
                rank,
            } => {
                if kind.ids_only() || *kind == PeerKind::Client {
                    return Err(unencodable("a named identity for a flag without a name"));
                }
                b.extend_from_slice(&uid.to_be_bytes());
                b.extend_from_slice(&gid.to_be_bytes());
                put_cstr(&mut b, nspace)?;
                b.extend_from_slice(&rank.to_be_bytes());
            }
        }
        put_cstr(&mut b, &self.version.text)?;
        put_cstr(&mut b, &self.bfrops)?;
        b.push(self.buffer_type.code());
        put_cstr(&mut b, &self.gds)?;
        if kind == PeerKind::Client && !self.trailer.info.is_empty() {
            return Err(unencodable("a client connect message with tool info"));
        }
        b.extend_from_slice(&self.trailer.info);
        if self.trailer.stray_byte {
            b.push(0);
        }
        let nbytes = u32::try_from(b.len() - CONNECT_HEADER_LEN)
            .map_err(|_| unencodable("a connect body longer than u32::MAX bytes"))?;
        b[8..12].copy_from_slice(&nbytes.to_le_bytes());
        Ok(b)
    }

    /// The values of a tool's or launcher's trailer ([`Trailer::info`]): empty when
    /// it sent none. Offsets in errors count from the start of the trailer.
    ///
    /// # Errors
    /// Any [`ErrorKind`] of `SIZE` and `INFO[]` in the message's buffer type (a
    /// decoded message's trailer always decodes), or [`ErrorKind::TrailingBytes`].
    pub fn tool_info(&self, limits: &Limits) -> Result<Vec<Info>, WireError> {
        if self.trailer.info.is_empty() {
            return Ok(Vec::new());
        }
        let mut r = Reader::new(&self.trailer.info, self.buffer_type, *limits);
        let v = read_tool_info(&mut r)?;
        r.finish()?;
        Ok(v)
    }

    /// The `native` credential's effective uid and gid (two u32 in the sender's
    /// host order, read as little-endian); `None` for a credential of another
    /// length.
    pub fn native_ids(&self) -> Option<(u32, u32)> {
        let c: &[u8; 8] = self.credential.as_slice().try_into().ok()?;
        Some((
            u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
            u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
        ))
    }

    /// The settings every later message of this connection is decoded and encoded
    /// with: the client's buffer type and version, and `limits`.
    ///
    /// # Errors
    /// [`ErrorKind::BadValue`] (offset 0) for a bfrops module other than `v41`,
    /// the only one this codec speaks.
    pub fn codec(&self, limits: Limits) -> Result<Codec, WireError> {
        if self.bfrops != BFROPS_V41 {
            return Err(WireError::new(
                ErrorKind::BadValue {
                    what: "the bfrops module",
                    why: "a module other than v41, the only one this codec speaks",
                },
                0,
            ));
        }
        Ok(Codec {
            buffer_type: self.buffer_type,
            version: self.version.clone(),
            limits,
        })
    }
}

/// The server's 8-byte reply to a launched client (type flag 0, docs/wire.md §3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientReply {
    /// The status (int32 BE); always 0 in practice, a failing server closes instead.
    pub status: i32,
    /// The client's index in the server's peer table (u32 BE), which the client puts
    /// in every later header's pindex.
    pub index: u32,
}

impl ClientReply {
    /// Decodes the reply at the start of `buf`: [`Decoded::NeedMore`] until 8 bytes
    /// are there. Any 8 bytes are a reply, so this never fails.
    pub fn decode(buf: &[u8]) -> Decoded<ClientReply> {
        match buf.get(..CLIENT_REPLY_LEN) {
            Some(b) => Decoded::Item {
                item: ClientReply {
                    status: be_u32(b, 0) as i32,
                    index: be_u32(b, 4),
                },
                used: CLIENT_REPLY_LEN,
            },
            None => Decoded::NeedMore(CLIENT_REPLY_LEN - buf.len()),
        }
    }

    /// The reply's 8 bytes.
    pub fn encode(&self) -> [u8; CLIENT_REPLY_LEN] {
        let mut b = [0; CLIENT_REPLY_LEN];
        b[..4].copy_from_slice(&self.status.to_be_bytes());
        b[4..].copy_from_slice(&self.index.to_be_bytes());
        b
    }
}

/// What follows a successful [`ToolReply`]'s status.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ToolAccept {
    /// The identifier the server assigned (nspace, rank): only for a tool that
    /// asked for one ([`PeerKind::needs_identifier`]).
    pub assigned: Option<(String, u32)>,
    /// The server's own nspace.
    pub server_nspace: String,
    /// The server's own rank.
    pub server_rank: u32,
    /// The credential-validation status (int32 BE); nonzero and the server closes.
    pub cred_status: i32,
}

/// The server's reply to a tool, launcher or singleton (type flags 1–10,
/// docs/wire.md §3.3): a status, and when it is 0 the rest ([`ToolAccept`]). A
/// nonzero status is all the server sends before it closes. Nspaces are fixed
/// 256-byte fields, NUL-padded.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ToolReply {
    /// The host's answer to the connection (int32 BE).
    pub status: i32,
    /// The rest, present exactly when `status` is 0.
    pub accept: Option<ToolAccept>,
}

impl ToolReply {
    /// Decodes the reply at the start of `buf`, for a peer that did
    /// (`needs_identifier`) or did not ask for an identifier: [`Decoded::NeedMore`]
    /// until it is whole. Offsets in errors count from the start of `buf`.
    ///
    /// # Errors
    /// [`ErrorKind::BadValue`] for an nspace field without a NUL, with bytes other
    /// than NUL after its first NUL (they would not re-encode), or not UTF-8.
    pub fn decode(buf: &[u8], needs_identifier: bool) -> Result<Decoded<ToolReply>, WireError> {
        let total = Self::len(0, needs_identifier);
        if buf.len() < 4 {
            return Ok(Decoded::NeedMore(4 - buf.len()));
        }
        let status = be_u32(buf, 0) as i32;
        if status != 0 {
            return Ok(Decoded::Item {
                item: ToolReply {
                    status,
                    accept: None,
                },
                used: 4,
            });
        }
        if buf.len() < total {
            return Ok(Decoded::NeedMore(total - buf.len()));
        }
        let mut at = 4;
        let assigned = if needs_identifier {
            let ns = nspace_field(buf, at)?;
            let rank = be_u32(buf, at + NSPACE_FIELD_LEN);
            at += NSPACE_FIELD_LEN + 4;
            Some((ns, rank))
        } else {
            None
        };
        let server_nspace = nspace_field(buf, at)?;
        let server_rank = be_u32(buf, at + NSPACE_FIELD_LEN);
        let cred_status = be_u32(buf, at + NSPACE_FIELD_LEN + 4) as i32;
        Ok(Decoded::Item {
            item: ToolReply {
                status,
                accept: Some(ToolAccept {
                    assigned,
                    server_nspace,
                    server_rank,
                    cred_status,
                }),
            },
            used: total,
        })
    }

    /// The length of a reply with `status`, for a peer that did or did not ask for
    /// an identifier: 4 for a nonzero status, else 4 + 260 + 4 + (260).
    pub fn len(status: i32, needs_identifier: bool) -> usize {
        match (status, needs_identifier) {
            (0, false) => 4 + NSPACE_FIELD_LEN + 4 + 4,
            (0, true) => 4 + 2 * (NSPACE_FIELD_LEN + 4) + 4,
            _ => 4,
        }
    }

    /// The reply's bytes.
    ///
    /// # Errors
    /// [`ErrorKind::Unencodable`] for an nspace of 256 bytes or more or holding a
    /// NUL, or for an `accept` that does not match the status (present with a
    /// nonzero status or absent with 0).
    pub fn encode(&self) -> Result<Vec<u8>, WireError> {
        let mut b = Vec::with_capacity(Self::len(self.status, true));
        b.extend_from_slice(&self.status.to_be_bytes());
        match (&self.accept, self.status) {
            (None, s) if s != 0 => {}
            (Some(a), 0) => {
                if let Some((ns, rank)) = &a.assigned {
                    put_nspace_field(&mut b, ns)?;
                    b.extend_from_slice(&rank.to_be_bytes());
                }
                put_nspace_field(&mut b, &a.server_nspace)?;
                b.extend_from_slice(&a.server_rank.to_be_bytes());
                b.extend_from_slice(&a.cred_status.to_be_bytes());
            }
            _ => {
                return Err(unencodable(
                    "a tool reply whose accept part does not match its status",
                ));
            }
        }
        Ok(b)
    }
}

/// A NUL-terminated string without a length (the handshake's strings), bounded by
/// [`Limits::max_bytes`], UTF-8.
fn cstr(r: &mut Reader<'_>, what: &'static str) -> Result<String, WireError> {
    let at = r.offset();
    let Some(n) = r.rest().iter().position(|&b| b == 0) else {
        return Err(r.error(ErrorKind::Truncated { what }));
    };
    r.bounded(n as u64, r.limits().max_bytes, what, at)?;
    let bytes = r.take(n + 1, what)?;
    let s = bytes.get(..n).unwrap_or_default();
    match core::str::from_utf8(s) {
        Ok(s) => Ok(s.into()),
        Err(_) => Err(r.error_at(
            ErrorKind::BadValue {
                what,
                why: "a string that is not UTF-8",
            },
            at,
        )),
    }
}

fn be_u32_field(r: &mut Reader<'_>, what: &'static str) -> Result<u32, WireError> {
    let b = r.take(4, what)?;
    Ok(be_u32(b, 0))
}

fn put_cstr(b: &mut Vec<u8>, s: &str) -> Result<(), WireError> {
    if s.as_bytes().contains(&0) {
        return Err(unencodable("a handshake string holding a NUL"));
    }
    b.extend_from_slice(s.as_bytes());
    b.push(0);
    Ok(())
}

fn nspace_field(buf: &[u8], at: usize) -> Result<String, WireError> {
    let field = buf.get(at..at + NSPACE_FIELD_LEN).unwrap_or_default();
    let bad = |why| {
        WireError::new(
            ErrorKind::BadValue {
                what: "a 256-byte nspace field",
                why,
            },
            at,
        )
    };
    let Some(n) = field.iter().position(|&b| b == 0) else {
        return Err(bad("no NUL in the field"));
    };
    let (s, pad) = field.split_at(n);
    if pad.iter().any(|&b| b != 0) {
        return Err(bad("bytes other than NUL after the nspace"));
    }
    core::str::from_utf8(s)
        .map(String::from)
        .map_err(|_| bad("an nspace that is not UTF-8"))
}

fn put_nspace_field(b: &mut Vec<u8>, ns: &str) -> Result<(), WireError> {
    if ns.len() >= NSPACE_FIELD_LEN || ns.as_bytes().contains(&0) {
        return Err(unencodable(
            "an nspace of 256 bytes or more, or holding a NUL",
        ));
    }
    b.extend_from_slice(ns.as_bytes());
    b.resize(b.len() + NSPACE_FIELD_LEN - ns.len(), 0);
    Ok(())
}

fn unencodable(what: &'static str) -> WireError {
    WireError::new(ErrorKind::Unencodable { what }, 0)
}

fn be_u32(buf: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    if let Some(s) = buf.get(at..at + 4) {
        b.copy_from_slice(s);
    }
    u32::from_be_bytes(b)
}

fn le_u32(buf: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    if let Some(s) = buf.get(at..at + 4) {
        b.copy_from_slice(s);
    }
    u32::from_le_bytes(b)
}

fn too_large(nbytes: u32, limits: &Limits) -> WireError {
    WireError::new(
        ErrorKind::TooLarge {
            what: "a connect message body",
            len: nbytes.into(),
            limit: limits.max_handshake.into(),
        },
        8,
    )
}

fn check_nbytes(nbytes: u32, limits: &Limits) -> Result<(), WireError> {
    if nbytes > limits.max_handshake {
        return Err(too_large(nbytes, limits));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    /// docs/wire.md §3.1's example (fence_hash, rank 0).
    const EXAMPLE: &str = "ffffffffffffffff35000000000000006e6174697665000000000800000000000000000035383339323537370000000000342e322e32726332007634310001686173680000";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn example() -> ConnectMsg {
        match ConnectMsg::decode(&hex(EXAMPLE), &Limits::DEFAULT).unwrap() {
            Decoded::Item { item, used } => {
                assert_eq!(used, 69);
                item
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_protocol_example_decodes_field_by_field_and_re_encodes() {
        let m = example();
        assert_eq!(m.psec, "native");
        assert_eq!(m.credential, [0; 8]);
        assert_eq!(m.native_ids(), Some((0, 0)));
        assert_eq!(
            m.identity,
            Identity::Client {
                nspace: "58392577".into(),
                rank: 0
            }
        );
        assert_eq!(m.version.text, "4.2.2rc2");
        assert_eq!(m.bfrops, "v41");
        assert_eq!(m.buffer_type, BufferType::NonDescribed);
        assert_eq!(m.gds, "hash");
        assert!(m.trailer.stray_byte && m.trailer.info.is_empty());
        assert_eq!(m.encode().unwrap(), hex(EXAMPLE));
        let c = m.codec(Limits::DEFAULT).unwrap();
        assert_eq!(c, Codec::v422());
    }

    #[test]
    fn a_connect_message_needs_its_whole_body() {
        let b = hex(EXAMPLE);
        for cut in 0..b.len() {
            let want = if cut < 12 { 16 - cut } else { b.len() - cut };
            assert_eq!(
                ConnectMsg::decode(&b[..cut], &Limits::DEFAULT),
                Ok(Decoded::NeedMore(want))
            );
        }
    }

    #[test]
    fn a_body_over_the_handshake_limit_is_refused_from_the_length_alone() {
        let mut b = vec![0xff; 8];
        b.extend_from_slice(&131_073u32.to_le_bytes());
        let e = ConnectMsg::decode(&b, &Limits::DEFAULT).unwrap_err();
        assert_eq!(e.offset, 8);
        assert!(matches!(e.kind, ErrorKind::TooLarge { .. }));
    }

    #[test]
    fn an_old_version_is_refused_naming_both() {
        let mut m = example();
        m.version = Version::parse("2.0.3", 0).unwrap();
        let e = ConnectMsg::decode(&m.encode().unwrap(), &Limits::DEFAULT).unwrap_err();
        // psec 7 + cred 4+8 + flag 1 + nspace 9 + rank 4, after the header.
        assert_eq!(e.offset, 16 + 33);
        let text = alloc::format!("{e}");
        assert!(text.contains("2.0.3") && text.contains("4.2"), "{text}");
    }

    #[test]
    fn a_client_trailer_other_than_one_zero_byte_is_refused() {
        let mut b = hex(EXAMPLE);
        *b.last_mut().unwrap() = 7;
        let e = ConnectMsg::decode(&b, &Limits::DEFAULT).unwrap_err();
        assert_eq!(e.offset, 68);
        assert_eq!(e.kind, ErrorKind::TrailingBytes { len: 1 });
        let mut m = example();
        m.trailer.stray_byte = false;
        let b = m.encode().unwrap();
        assert_eq!(b.len(), 68);
        assert!(matches!(
            ConnectMsg::decode(&b, &Limits::DEFAULT),
            Ok(Decoded::Item { item, .. }) if item == m
        ));
    }

    #[test]
    fn tool_identities_and_trailers_round_trip() {
        let mut m = example();
        m.identity = Identity::Named {
            kind: PeerKind::Singleton,
            uid: 1000,
            gid: 100,
            nspace: "singleton.vm.42".into(),
            rank: 0,
        };
        let info = [
            Info::new("pmix.pid", crate::value::Value::Uint32(4242)),
            Info::new(
                "pmix.cmd.line",
                crate::value::Value::String(Some("prun".into())),
            ),
        ];
        m.trailer = Trailer::with_info(&info, m.buffer_type, true).unwrap();
        let b = m.encode().unwrap();
        let Decoded::Item { item, .. } = ConnectMsg::decode(&b, &Limits::DEFAULT).unwrap() else {
            panic!()
        };
        assert_eq!(item, m);
        assert_eq!(item.tool_info(&Limits::DEFAULT).unwrap(), info);
        // A trailer whose INFO does not decode is refused where it breaks.
        let mut bad = b.clone();
        let at = b.len() - 1 - m.trailer.info.len();
        bad[at + 1] = 0x7f;
        assert!(ConnectMsg::decode(&bad, &Limits::DEFAULT).is_err());
        m.identity = Identity::Ids {
            kind: PeerKind::ToolNeedsId,
            uid: 1,
            gid: 2,
        };
        let b = m.encode().unwrap();
        let Decoded::Item { item, .. } = ConnectMsg::decode(&b, &Limits::DEFAULT).unwrap() else {
            panic!()
        };
        assert_eq!(item, m);
        m.identity = Identity::Ids {
            kind: PeerKind::Singleton,
            uid: 1,
            gid: 2,
        };
        assert!(m.encode().is_err());
    }

    #[test]
    fn the_client_reply_is_status_and_index_big_endian() {
        // ANNOTATED.md §2.
        let b = [0, 0, 0, 0, 0, 0, 0, 1];
        let r = ClientReply {
            status: 0,
            index: 1,
        };
        assert_eq!(ClientReply::decode(&b), Decoded::Item { item: r, used: 8 });
        assert_eq!(r.encode(), b);
        assert_eq!(ClientReply::decode(&b[..5]), Decoded::NeedMore(3));
    }

    #[test]
    fn tool_replies_carry_fixed_nspace_fields() {
        let r = ToolReply {
            status: 0,
            accept: Some(ToolAccept {
                assigned: Some(("tool.1".into(), 0)),
                server_nspace: "prterun-vm-1".into(),
                server_rank: 0,
                cred_status: 0,
            }),
        };
        let b = r.encode().unwrap();
        assert_eq!(b.len(), ToolReply::len(0, true));
        assert_eq!(b.len(), 4 + 256 + 4 + 256 + 4 + 4);
        assert_eq!(
            ToolReply::decode(&b, true),
            Ok(Decoded::Item {
                item: r,
                used: b.len()
            })
        );
        assert_eq!(
            ToolReply::decode(&b[..10], true),
            Ok(Decoded::NeedMore(b.len() - 10))
        );
        let refused = ToolReply {
            status: -1,
            accept: None,
        };
        assert_eq!(refused.encode().unwrap(), [0xff; 4]);
        let mut bad = b.clone();
        bad[4 + 200] = b'x';
        assert_eq!(ToolReply::decode(&bad, true).unwrap_err().offset, 4);
    }
}
