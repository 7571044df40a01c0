//! One typed message per command, request and reply, events and I/O forwarding
//! (docs/wire.md §6–7).
//!
//! A frame's payload (after the 16-byte header, which `frame` reads) is decoded by
//! one of four functions, chosen by the frame's direction and tag:
//!
//! - [`decode_request`]: a client request (the first pack is its [`Command`]);
//! - [`decode_reply`]: the server's reply to a request of a known command (the
//!   caller matched the tag to the request);
//! - [`decode_event`]: an event the server pushes (tag 0, §7);
//! - [`decode_iof`]: forwarded output (tag 2, §6.13).
//!
//! Each message type re-encodes with `encode` to exactly the bytes it was decoded
//! from: decoders accept only what the encoders write (a pack of a count other than
//! the layout's, a leftover byte, a non-minimal varint are errors), and optional
//! trailing fields are `Option`s that remember whether they were sent.
//!
//! **Arrays.** A layout `SIZE n` then `T[n]` is written as a `Vec<T>`: the SIZE pack,
//! then one pack of n elements, omitted when n is 0 (what every 4.2 sender does,
//! docs/wire.md §6 "if n>0"). A SIZE that disagrees with the pack's own count is
//! [`ErrorKind::BadCount`].
//!
//! **The status-only reply.** A 4.2 server answers any request with a lone STATUS
//! pack when its handler fails (§6 "Generic error reply"), and several commands'
//! replies are only a STATUS anyway. [`decode_reply`] decodes a payload that is
//! exactly one STATUS pack as [`Reply::Status`] for every command, before it tries
//! the command's own layout. The typed reply structs therefore never hold a reply
//! that is a lone STATUS: a GETNB reply without byte objects, a 4.2.0–4.2.3 group
//! construct reply without its context id, a QUERY reply without its SIZE are all
//! `Reply::Status`, and `encode` refuses a typed (or raw) reply whose bytes would
//! be a lone STATUS ([`ErrorKind::Unencodable`]) rather than write bytes that
//! decode as another message. That is the only rule needed: every other typed layout has at least
//! one pack after the status. (REQ's reply has no status, and its first pack, a
//! STRING nspace that must not be NULL, never reads as a STATUS: `02 00` would be a
//! NULL string.)
//!
//! **What is checked against what.** REQ and its blob, COMMIT, FENCENB, GETNB and
//! its reply, FINALIZE, ABORT, REGEVENTS, DEREGEVENTS, NOTIFY, the tag-0 event,
//! JOB_CONTROL, QUERY and its reply and the 4.2.0–4.2.3 group requests are in the
//! captured traffic and decode and re-encode byte for byte (`tests/messages.rs`).
//! The 4.2.4+ group layouts, the group replies with a context id, and the other
//! commands of §6.13 (PUBLISH, LOOKUP, UNPUBLISH, SPAWN, CONNECT, DISCONNECT, LOG,
//! ALLOC, MONITOR, the credentials, IOF, COMPUTE_DEVICE_DISTANCES and their
//! replies) follow docs/wire.md's layouts and are checked only by round trips: no
//! captured traffic holds them.

use alloc::vec::Vec;

use crate::buf::{Element, Reader, Writer};
use crate::error::{ErrorKind, WireError};
use crate::types::{BufferType, Command, DataType};
use crate::value::{Size, Status};
use crate::version::Codec;

mod basic;
mod event;
mod group;
mod iof;
mod job;
mod other;
mod pblob;

pub use basic::{
    Abort, Commit, CommitBucket, FT_CONTRIBUTION_KEY, FenceNb, FenceNbReply, GetNb, GetNbReply,
    ProcData,
};
pub use event::{DeregEvents, Event, Notify, RegEvents};
pub use group::{
    GroupConstruct, GroupConstructReply, GroupDestruct, GroupDestructReply, GroupLeave,
};
pub use iof::{Iof, IofDereg, IofPull, IofPullReply, IofPush};
pub use job::{APP_ARRAY_KEY, JobInfo, JobItem, NODE_ARRAY_KEY, PROC_BLOB_KEY, SESSION_ARRAY_KEY};
pub use other::{
    Alloc, ComputeDeviceDistances, Connect, ConnectReply, DistancesReply, GetCredential,
    GetCredentialReply, InfoReply, JobBlob, JobControl, Log, Lookup, LookupReply, Monitor,
    ProcCpuset, Publish, QueryInfo, Spawn, SpawnReply, Unpublish, ValidateCred,
    connect_reply_with_jobs, spawn_reply_with_job,
};
pub use pblob::ProcBlob;

/// A client request, one variant per command (docs/wire.md §6).
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// REQ (0): `PMIx_Init`'s request for the job's information; nothing after the
    /// command (§6.1).
    Req,
    /// ABORT (1), §6.3.
    Abort(Abort),
    /// COMMIT (2) with its buckets, §6.4.
    Commit(Commit),
    /// FENCENB (3), §6.5.
    FenceNb(FenceNb),
    /// GETNB (4), §6.6.
    GetNb(GetNb),
    /// FINALIZE (5): nothing after the command (§6.2).
    Finalize,
    /// PUBLISHNB (6), §6.13.
    Publish(Publish),
    /// LOOKUPNB (7), §6.13.
    Lookup(Lookup),
    /// UNPUBLISHNB (8), §6.13.
    Unpublish(Unpublish),
    /// SPAWNNB (9), §6.13.
    Spawn(Spawn),
    /// CONNECTNB (10), §6.13.
    Connect(Connect),
    /// DISCONNECTNB (11): the same layout as CONNECTNB, §6.13.
    Disconnect(Connect),
    /// NOTIFY (12) from a client, §6.8.
    Notify(Notify),
    /// REGEVENTS (13), §6.7.
    RegEvents(RegEvents),
    /// DEREGEVENTS (14), one-way, §6.7.
    DeregEvents(DeregEvents),
    /// QUERY (15), §6.11.
    Query(QueryInfo),
    /// LOG (16), §6.13.
    Log(Log),
    /// ALLOC (17), §6.13.
    Alloc(Alloc),
    /// JOB_CONTROL (18), §6.12.
    JobControl(JobControl),
    /// MONITOR (19), §6.13.
    Monitor(Monitor),
    /// GET_CREDENTIAL (20), §6.13.
    GetCredential(GetCredential),
    /// VALIDATE_CRED (21), §6.13.
    ValidateCred(ValidateCred),
    /// IOF_PULL (22), §6.13.
    IofPull(IofPull),
    /// IOF_PUSH (23), §6.13.
    IofPush(IofPush),
    /// GROUP_CONSTRUCT (24), §6.9.
    GroupConstruct(GroupConstruct),
    /// GROUP_LEAVE (27), §6.9.
    GroupLeave(GroupLeave),
    /// GROUP_DESTRUCT (28) in either layout, §6.9.
    GroupDestruct(GroupDestruct),
    /// IOF_DEREG (29), §6.13.
    IofDereg(IofDereg),
    /// COMPUTE_DEVICE_DISTANCES (32), §6.10.
    ComputeDeviceDistances(ComputeDeviceDistances),
    /// A command whose layout this codec does not type (GROUP_JOIN/INVITE, the
    /// fabric commands, the 5.x/6.x ids 34–38): the bytes after the command pack,
    /// kept as they came.
    Raw {
        /// The command.
        command: Command,
        /// Everything after the command pack.
        bytes: Vec<u8>,
    },
}

/// The server's reply to a request (docs/wire.md §6), one variant per reply layout.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// A reply that is exactly one STATUS pack: the whole reply of FINALIZE,
    /// ABORT, COMMIT, FENCENB (but [`Reply::FenceNb`]), PUBLISH, UNPUBLISH, DISCONNECT, NOTIFY, REGEVENTS,
    /// LOG, IOF_PUSH, IOF_DEREG and GROUP_LEAVE, and the generic error reply of any
    /// command (see the module docs for why it takes precedence).
    Status {
        /// The command of the request this answers (not on the wire).
        command: Command,
        /// The status.
        status: Status,
    },
    /// REQ's reply: the job-info blob (§6.1).
    Req(JobInfo),
    /// GETNB's reply with at least one byte object (§6.6).
    GetNb(GetNbReply),
    /// FENCENB's reply with a rank-state round's contributions (a pmix-rs
    /// extension: [`FenceNbReply`]).
    FenceNb(FenceNbReply),
    /// LOOKUPNB's reply (§6.13).
    Lookup(LookupReply),
    /// SPAWNNB's reply (§6.13).
    Spawn(SpawnReply),
    /// CONNECTNB's reply (§6.13).
    Connect(ConnectReply),
    /// QUERY's reply (§6.11).
    Query(InfoReply),
    /// ALLOC's reply (§6.13).
    Alloc(InfoReply),
    /// JOB_CONTROL's reply (§6.12).
    JobControl(InfoReply),
    /// MONITOR's reply (§6.13).
    Monitor(InfoReply),
    /// GET_CREDENTIAL's reply (§6.13).
    GetCredential(GetCredentialReply),
    /// VALIDATE_CRED's reply (§6.13).
    ValidateCred(InfoReply),
    /// IOF_PULL's reply (§6.13).
    IofPull(IofPullReply),
    /// GROUP_CONSTRUCT's reply in either layout (§6.9).
    GroupConstruct(GroupConstructReply),
    /// GROUP_DESTRUCT's reply with its trailing SIZE (§6.9).
    GroupDestruct(GroupDestructReply),
    /// COMPUTE_DEVICE_DISTANCES's reply (§6.10).
    ComputeDeviceDistances(DistancesReply),
    /// The reply to a command of [`Request::Raw`] that is not a lone STATUS: the
    /// whole payload, kept as it came.
    Raw {
        /// The command of the request this answers.
        command: Command,
        /// The payload.
        bytes: Vec<u8>,
    },
}

fn reader<'a>(payload: &'a [u8], codec: &Codec) -> Reader<'a> {
    Reader::new(payload, codec.buffer_type, codec.limits)
}

fn bad(what: &'static str, why: &'static str, at: usize) -> WireError {
    WireError::new(ErrorKind::BadValue { what, why }, at)
}

/// Decodes a client request: the whole frame payload.
///
/// # Errors
/// Any [`ErrorKind`] of the command's layout at the offending byte (a command byte
/// no version uses is [`ErrorKind::BadValue`]); bytes left after the layout are
/// [`ErrorKind::TrailingBytes`].
pub fn decode_request(payload: &[u8], codec: &Codec) -> Result<Request, WireError> {
    let mut r = reader(payload, codec);
    let command = r.unpack_one::<Command>("command")?;
    let req = Request::read_body(command, &mut r, codec)?;
    r.finish()?;
    Ok(req)
}

/// Decodes the server's reply to a request of `cmd`: the whole frame payload. A
/// payload that is exactly one STATUS pack is [`Reply::Status`] whatever the
/// command (module docs).
///
/// # Errors
/// Any [`ErrorKind`] of the reply's layout at the offending byte; bytes left after
/// the layout are [`ErrorKind::TrailingBytes`].
pub fn decode_reply(cmd: Command, payload: &[u8], codec: &Codec) -> Result<Reply, WireError> {
    if let Some(status) = lone_status(payload, codec) {
        return Ok(Reply::Status {
            command: cmd,
            status,
        });
    }
    let mut r = reader(payload, codec);
    let reply = Reply::read(cmd, &mut r, codec)?;
    r.finish()?;
    Ok(reply)
}

/// Decodes an event the server delivers on tag 0 (docs/wire.md §7), with or without
/// its trailing DATA_RANGE.
///
/// # Errors
/// Any [`ErrorKind`] of the layout; a first pack other than the NOTIFY command is
/// [`ErrorKind::BadValue`]; leftover bytes are [`ErrorKind::TrailingBytes`].
pub fn decode_event(payload: &[u8], codec: &Codec) -> Result<Event, WireError> {
    let mut r = reader(payload, codec);
    let ev = Event::read(&mut r)?;
    r.finish()?;
    Ok(ev)
}

/// Decodes forwarded I/O on tag 2 (docs/wire.md §6.13).
///
/// # Errors
/// Any [`ErrorKind`] of the layout; leftover bytes are [`ErrorKind::TrailingBytes`].
pub fn decode_iof(payload: &[u8], codec: &Codec) -> Result<Iof, WireError> {
    let mut r = reader(payload, codec);
    let iof = Iof::read(&mut r)?;
    r.finish()?;
    Ok(iof)
}

/// The status of a payload that is exactly one STATUS pack.
fn lone_status(payload: &[u8], codec: &Codec) -> Option<Status> {
    let mut r = reader(payload, codec);
    let s = r.unpack_one::<Status>("status").ok()?;
    r.is_empty().then_some(s)
}

impl Request {
    /// The request's command.
    pub fn command(&self) -> Command {
        match self {
            Request::Req => Command::Req,
            Request::Abort(_) => Command::Abort,
            Request::Commit(_) => Command::Commit,
            Request::FenceNb(_) => Command::FenceNb,
            Request::GetNb(_) => Command::GetNb,
            Request::Finalize => Command::Finalize,
            Request::Publish(_) => Command::PublishNb,
            Request::Lookup(_) => Command::LookupNb,
            Request::Unpublish(_) => Command::UnpublishNb,
            Request::Spawn(_) => Command::SpawnNb,
            Request::Connect(_) => Command::ConnectNb,
            Request::Disconnect(_) => Command::DisconnectNb,
            Request::Notify(_) => Command::Notify,
            Request::RegEvents(_) => Command::RegEvents,
            Request::DeregEvents(_) => Command::DeregEvents,
            Request::Query(_) => Command::Query,
            Request::Log(_) => Command::Log,
            Request::Alloc(_) => Command::Alloc,
            Request::JobControl(_) => Command::JobControl,
            Request::Monitor(_) => Command::Monitor,
            Request::GetCredential(_) => Command::GetCredential,
            Request::ValidateCred(_) => Command::ValidateCred,
            Request::IofPull(_) => Command::IofPull,
            Request::IofPush(_) => Command::IofPush,
            Request::GroupConstruct(_) => Command::GroupConstruct,
            Request::GroupLeave(_) => Command::GroupLeave,
            Request::GroupDestruct(_) => Command::GroupDestruct,
            Request::IofDereg(_) => Command::IofDereg,
            Request::ComputeDeviceDistances(_) => Command::ComputeDeviceDistances,
            Request::Raw { command, .. } => *command,
        }
    }

    /// Whether the server answers this request: every command but DEREGEVENTS
    /// (docs/wire.md §6.7).
    pub fn expects_reply(&self) -> bool {
        self.command() != Command::DeregEvents
    }

    fn read_body(command: Command, r: &mut Reader<'_>, codec: &Codec) -> Result<Self, WireError> {
        Ok(match command {
            Command::Req => Request::Req,
            Command::Abort => Request::Abort(Abort::read(r)?),
            Command::Commit => Request::Commit(Commit::read(r)?),
            Command::FenceNb => Request::FenceNb(FenceNb::read(r)?),
            Command::GetNb => Request::GetNb(GetNb::read(r)?),
            Command::Finalize => Request::Finalize,
            Command::PublishNb => Request::Publish(Publish::read(r)?),
            Command::LookupNb => Request::Lookup(Lookup::read(r)?),
            Command::UnpublishNb => Request::Unpublish(Unpublish::read(r)?),
            Command::SpawnNb => Request::Spawn(Spawn::read(r)?),
            Command::ConnectNb => Request::Connect(Connect::read(r)?),
            Command::DisconnectNb => Request::Disconnect(Connect::read(r)?),
            Command::Notify => Request::Notify(Notify::read(r)?),
            Command::RegEvents => Request::RegEvents(RegEvents::read(r)?),
            Command::DeregEvents => Request::DeregEvents(DeregEvents::read(r)?),
            Command::Query => Request::Query(QueryInfo::read(r)?),
            Command::Log => Request::Log(Log::read(r)?),
            Command::Alloc => Request::Alloc(Alloc::read(r)?),
            Command::JobControl => Request::JobControl(JobControl::read(r)?),
            Command::Monitor => Request::Monitor(Monitor::read(r)?),
            Command::GetCredential => Request::GetCredential(GetCredential::read(r)?),
            Command::ValidateCred => Request::ValidateCred(ValidateCred::read(r)?),
            Command::IofPull => Request::IofPull(IofPull::read(r)?),
            Command::IofPush => Request::IofPush(IofPush::read(r)?),
            Command::GroupConstruct => Request::GroupConstruct(GroupConstruct::read(r)?),
            Command::GroupLeave => Request::GroupLeave(GroupLeave::read(r)?),
            Command::GroupDestruct => Request::GroupDestruct(GroupDestruct::read(r, codec)?),
            Command::IofDereg => Request::IofDereg(IofDereg::read(r)?),
            Command::ComputeDeviceDistances => {
                Request::ComputeDeviceDistances(ComputeDeviceDistances::read(r)?)
            }
            command => Request::Raw {
                command,
                bytes: r.take(r.rest().len(), "raw request")?.to_vec(),
            },
        })
    }

    /// The request's bytes (the frame payload) in `codec`'s buffer type and
    /// layouts.
    ///
    /// # Errors
    /// [`ErrorKind::Unencodable`] for a count or length that does not fit the wire,
    /// a [`Request::Raw`] of a command this codec types, or a group message whose
    /// form is not the layout of `codec`'s version.
    pub fn encode(&self, codec: &Codec) -> Result<Vec<u8>, WireError> {
        let mut w = Writer::new(codec.buffer_type).with_limits(codec.limits);
        w.pack_one(&self.command());
        match self {
            Request::Req | Request::Finalize => {}
            Request::Abort(m) => m.write(&mut w),
            Request::Commit(m) => m.write(&mut w),
            Request::FenceNb(m) => m.write(&mut w),
            Request::GetNb(m) => m.write(&mut w),
            Request::Publish(m) => m.write(&mut w),
            Request::Lookup(m) => m.write(&mut w),
            Request::Unpublish(m) => m.write(&mut w),
            Request::Spawn(m) => m.write(&mut w),
            Request::Connect(m) | Request::Disconnect(m) => m.write(&mut w),
            Request::Notify(m) => m.write(&mut w),
            Request::RegEvents(m) => m.write(&mut w),
            Request::DeregEvents(m) => m.write(&mut w),
            Request::Query(m) => m.write(&mut w),
            Request::Log(m) => m.write(&mut w),
            Request::Alloc(m) => m.write(&mut w),
            Request::JobControl(m) => m.write(&mut w),
            Request::Monitor(m) => m.write(&mut w),
            Request::GetCredential(m) => m.write(&mut w),
            Request::ValidateCred(m) => m.write(&mut w),
            Request::IofPull(m) => m.write(&mut w),
            Request::IofPush(m) => m.write(&mut w),
            Request::GroupConstruct(m) => m.write(&mut w),
            Request::GroupLeave(m) => m.write(&mut w),
            Request::GroupDestruct(m) => m.write(&mut w, codec),
            Request::IofDereg(m) => m.write(&mut w),
            Request::ComputeDeviceDistances(m) => m.write(&mut w),
            Request::Raw { command, bytes } => {
                if is_typed_request(*command) {
                    w.fail("a raw request of a command this codec types");
                }
                w.raw(bytes);
            }
        }
        w.finish()
    }
}

/// Whether [`decode_request`] gives a typed variant (not [`Request::Raw`]) for
/// `command`.
fn is_typed_request(command: Command) -> bool {
    !matches!(
        command,
        Command::GroupJoin
            | Command::GroupInvite
            | Command::FabricRegister
            | Command::FabricUpdate
            | Command::RefreshCache
            | Command::Resblk
            | Command::SessionCtrl
            | Command::ReqSysinfo
            | Command::ResolvePeers
            | Command::ResolveNode
    )
}

impl Reply {
    /// The command of the request this reply answers.
    pub fn command(&self) -> Command {
        match self {
            Reply::Status { command, .. } | Reply::Raw { command, .. } => *command,
            Reply::Req(_) => Command::Req,
            Reply::GetNb(_) => Command::GetNb,
            Reply::FenceNb(_) => Command::FenceNb,
            Reply::Lookup(_) => Command::LookupNb,
            Reply::Spawn(_) => Command::SpawnNb,
            Reply::Connect(_) => Command::ConnectNb,
            Reply::Query(_) => Command::Query,
            Reply::Alloc(_) => Command::Alloc,
            Reply::JobControl(_) => Command::JobControl,
            Reply::Monitor(_) => Command::Monitor,
            Reply::GetCredential(_) => Command::GetCredential,
            Reply::ValidateCred(_) => Command::ValidateCred,
            Reply::IofPull(_) => Command::IofPull,
            Reply::GroupConstruct(_) => Command::GroupConstruct,
            Reply::GroupDestruct(_) => Command::GroupDestruct,
            Reply::ComputeDeviceDistances(_) => Command::ComputeDeviceDistances,
        }
    }

    /// The reply's status: the first pack of every reply but REQ's (which has
    /// none: `None`) and a raw one (`None`).
    pub fn status(&self) -> Option<Status> {
        Some(match self {
            Reply::Status { status, .. } => *status,
            Reply::Req(_) | Reply::Raw { .. } => return None,
            Reply::GetNb(m) => m.status,
            Reply::FenceNb(m) => m.status,
            Reply::Lookup(m) => m.status,
            Reply::Spawn(m) => m.status,
            Reply::Connect(m) => m.status,
            Reply::Query(m)
            | Reply::Alloc(m)
            | Reply::JobControl(m)
            | Reply::Monitor(m)
            | Reply::ValidateCred(m) => m.status,
            Reply::GetCredential(m) => m.status,
            Reply::IofPull(m) => m.status,
            Reply::GroupConstruct(m) => m.status,
            Reply::GroupDestruct(m) => m.status,
            Reply::ComputeDeviceDistances(m) => m.status,
        })
    }

    fn read(cmd: Command, r: &mut Reader<'_>, codec: &Codec) -> Result<Self, WireError> {
        Ok(match cmd {
            Command::Req => Reply::Req(JobInfo::read(r)?),
            Command::GetNb => Reply::GetNb(GetNbReply::read(r)?),
            Command::FenceNb => Reply::FenceNb(FenceNbReply::read(r)?),
            Command::LookupNb => Reply::Lookup(LookupReply::read(r)?),
            Command::SpawnNb => Reply::Spawn(SpawnReply::read(r)?),
            Command::ConnectNb => Reply::Connect(ConnectReply::read(r)?),
            Command::Query => Reply::Query(InfoReply::read(r)?),
            Command::Alloc => Reply::Alloc(InfoReply::read(r)?),
            Command::JobControl => Reply::JobControl(InfoReply::read(r)?),
            Command::Monitor => Reply::Monitor(InfoReply::read(r)?),
            Command::GetCredential => Reply::GetCredential(GetCredentialReply::read(r)?),
            Command::ValidateCred => Reply::ValidateCred(InfoReply::read(r)?),
            Command::IofPull => Reply::IofPull(IofPullReply::read(r)?),
            Command::GroupConstruct => Reply::GroupConstruct(GroupConstructReply::read(r, codec)?),
            Command::GroupDestruct => Reply::GroupDestruct(GroupDestructReply::read(r)?),
            Command::ComputeDeviceDistances => {
                Reply::ComputeDeviceDistances(DistancesReply::read(r)?)
            }
            c if is_typed_request(c) => {
                // A status-only layout: the lone STATUS was tried first, so this
                // payload is a STATUS with something after it (or no STATUS).
                r.unpack_one::<Status>("status")?;
                r.finish()?;
                return Err(r.error(ErrorKind::TrailingBytes { len: 0 }));
            }
            command => Reply::Raw {
                command,
                bytes: r.take(r.rest().len(), "raw reply")?.to_vec(),
            },
        })
    }

    /// The reply's bytes (the frame payload) in `codec`'s buffer type and layouts.
    ///
    /// # Errors
    /// [`ErrorKind::Unencodable`] for a count or length that does not fit the wire,
    /// a typed or raw reply whose bytes would be a lone STATUS (that is
    /// [`Reply::Status`], module docs), a [`Reply::Raw`] of a command this codec
    /// types, or a group reply whose form is not the layout of `codec`'s version.
    pub fn encode(&self, codec: &Codec) -> Result<Vec<u8>, WireError> {
        let mut w = Writer::new(codec.buffer_type).with_limits(codec.limits);
        match self {
            Reply::Status { status, .. } => {
                w.pack_one(status);
                return w.finish();
            }
            Reply::Raw { command, bytes } => {
                if is_typed_request(*command) {
                    w.fail("a raw reply to a command this codec types");
                }
                w.raw(bytes);
            }
            Reply::Req(m) => m.write(&mut w),
            Reply::GetNb(m) => m.write(&mut w),
            Reply::FenceNb(m) => m.write(&mut w),
            Reply::Lookup(m) => m.write(&mut w),
            Reply::Spawn(m) => m.write(&mut w),
            Reply::Connect(m) => m.write(&mut w),
            Reply::Query(m)
            | Reply::Alloc(m)
            | Reply::JobControl(m)
            | Reply::Monitor(m)
            | Reply::ValidateCred(m) => m.write(&mut w),
            Reply::GetCredential(m) => m.write(&mut w),
            Reply::IofPull(m) => m.write(&mut w),
            Reply::GroupConstruct(m) => m.write(&mut w, codec),
            Reply::GroupDestruct(m) => m.write(&mut w),
            Reply::ComputeDeviceDistances(m) => m.write(&mut w),
        }
        let bytes = w.finish()?;
        if lone_status(&bytes, codec).is_some() {
            return Err(WireError::new(
                ErrorKind::Unencodable {
                    what: "a typed or raw reply that is a lone STATUS (it is Reply::Status)",
                },
                0,
            ));
        }
        Ok(bytes)
    }
}

impl Event {
    /// The event's bytes (the tag-0 frame payload) in `codec`'s buffer type.
    ///
    /// # Errors
    /// [`ErrorKind::Unencodable`] for a count or length that does not fit the wire.
    pub fn encode(&self, codec: &Codec) -> Result<Vec<u8>, WireError> {
        let mut w = Writer::new(codec.buffer_type).with_limits(codec.limits);
        self.write(&mut w);
        w.finish()
    }
}

impl Iof {
    /// The forwarded output's bytes (the tag-2 frame payload) in `codec`'s buffer
    /// type.
    ///
    /// # Errors
    /// [`ErrorKind::Unencodable`] for a count or length that does not fit the wire.
    pub fn encode(&self, codec: &Codec) -> Result<Vec<u8>, WireError> {
        let mut w = Writer::new(codec.buffer_type).with_limits(codec.limits);
        self.write(&mut w);
        w.finish()
    }
}

// ---------------------------------------------------------------------------
// Shared pieces of the layouts.

/// `SIZE n` then, if n > 0, one pack of n `T` (of processes, at most
/// [`crate::Limits::max_procs`]; of anything else, at most
/// [`crate::Limits::max_list`]).
fn read_list<T: Element>(r: &mut Reader<'_>, what: &'static str) -> Result<Vec<T>, WireError> {
    let size_at = r.offset();
    let n = r.unpack_one::<Size>(what)?.0;
    if n == 0 {
        return Ok(Vec::new());
    }
    let limit = if T::TYPE == crate::DataType::Proc {
        r.limits().max_procs
    } else {
        r.limits().max_list
    };
    r.bounded(n, limit, what, size_at)?;
    let pack_at = r.offset();
    let v = r.unpack::<T>(what)?;
    if v.len() as u64 != n {
        // The pack holds another number of elements than its SIZE announced.
        return Err(WireError::new(
            ErrorKind::BadCount {
                what,
                found: v.len() as i64,
            },
            pack_at,
        ));
    }
    Ok(v)
}

/// Writes what [`read_list`] reads.
fn write_list<T: Element>(w: &mut Writer, items: &[T]) {
    w.pack_one(&Size(items.len() as u64));
    if !items.is_empty() {
        w.pack(items);
    }
}

/// A BYTE_OBJECT or BUFFER body's bytes: size `vu`, then the bytes, bounded by
/// [`crate::Limits::max_bytes`].
fn read_sized_bytes<'a>(r: &mut Reader<'a>, what: &'static str) -> Result<&'a [u8], WireError> {
    let at = r.offset();
    let n = r.varint(64, what)?;
    let n = r.bounded(n, r.limits().max_bytes, what, at)?;
    r.take(n, what)
}

/// Reads a BYTE_OBJECT body (size and bytes) and decodes its bytes, a buffer of
/// type `ty`, with `f`, which must read them all.
fn read_nested<'a, T>(
    r: &mut Reader<'a>,
    ty: BufferType,
    what: &'static str,
    f: impl FnOnce(&mut Reader<'a>) -> Result<T, WireError>,
) -> Result<T, WireError> {
    let bytes = read_sized_bytes(r, what)?;
    let mut inner = r.nested(bytes, ty)?;
    let v = f(&mut inner)?;
    inner.finish()?;
    Ok(v)
}

/// Writes a BYTE_OBJECT body holding what `f` packs into a buffer of type `ty`.
fn write_nested(w: &mut Writer, ty: BufferType, f: impl FnOnce(&mut Writer)) {
    let mut inner = Writer::new(ty);
    if let Some(limits) = w.limits() {
        inner = inner.with_limits(*limits);
    }
    f(&mut inner);
    match inner.finish() {
        Ok(bytes) => {
            w.varint(bytes.len() as u64);
            w.raw(&bytes);
        }
        Err(_) => {
            w.fail("a nested buffer that could not be encoded");
            w.varint(0);
        }
    }
}

/// Reads the header of a top-level pack of exactly one `ty` element.
fn one_header(r: &mut Reader<'_>, ty: DataType, what: &'static str) -> Result<(), WireError> {
    let at = r.offset();
    let n = r.pack_header(ty, what)?;
    if n != 1 {
        return Err(WireError::new(
            ErrorKind::BadCount {
                what,
                found: n as i64,
            },
            at,
        ));
    }
    Ok(())
}

/// Reads top-level packs of one `T` each until the input ends.
fn read_until_end<T: Element>(r: &mut Reader<'_>, what: &'static str) -> Result<Vec<T>, WireError> {
    // A guess (a KVAL of a short key and a number takes about 16 bytes), bounded
    // like any reservation; pushing grows the rest.
    let mut v = Vec::with_capacity(r.capacity_for(r.rest().len() / 16));
    while !r.is_empty() {
        v.push(r.unpack_one::<T>(what)?);
    }
    Ok(v)
}

/// [`read_until_end`], refusing the element after the first `max` (at its offset).
fn read_until_end_bounded<T: Element>(
    r: &mut Reader<'_>,
    max: u32,
    what: &'static str,
) -> Result<Vec<T>, WireError> {
    let mut v = Vec::with_capacity(r.capacity_for(r.rest().len() / 16).min(max as usize));
    while !r.is_empty() {
        r.bounded(v.len() as u64 + 1, max, what, r.offset())?;
        v.push(r.unpack_one::<T>(what)?);
    }
    Ok(v)
}

/// Writes one pack of one element per item.
fn write_each<T: Element>(w: &mut Writer, items: &[T]) {
    for it in items {
        w.pack_one(it);
    }
}

/// Defines a message struct whose layout is a sequence of top-level packs: `one T`
/// (a pack of one element) or `list T` (`SIZE n` and, if n > 0, a pack of n).
macro_rules! layout {
    (
        $(#[$m:meta])*
        pub struct $name:ident {
            $( $(#[$fm:meta])* $field:ident : $kind:ident $ty:ty, )*
        }
    ) => {
        $(#[$m])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name {
            $( $(#[$fm])* pub $field: layout!(@ty $kind $ty), )*
        }

        impl $name {
            #[allow(unused_variables)]
            pub(crate) fn read(r: &mut $crate::buf::Reader<'_>) -> Result<Self, $crate::error::WireError> {
                Ok($name { $( $field: layout!(@read $kind $ty, r, stringify!($field)), )* })
            }

            #[allow(unused_variables)]
            pub(crate) fn write(&self, w: &mut $crate::buf::Writer) {
                $( layout!(@write $kind, w, &self.$field); )*
            }
        }
    };
    (@ty one $ty:ty) => { $ty };
    (@ty list $ty:ty) => { alloc::vec::Vec<$ty> };
    (@read one $ty:ty, $r:ident, $what:expr) => { $r.unpack_one::<$ty>($what)? };
    (@read list $ty:ty, $r:ident, $what:expr) => { $crate::msg::read_list::<$ty>($r, $what)? };
    (@write one, $w:ident, $v:expr) => { $w.pack_one($v) };
    (@write list, $w:ident, $v:expr) => { $crate::msg::write_list($w, $v) };
}
use layout;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Limits;
    use crate::value::{DataArray, Kval, Proc, Value, WStr};
    use alloc::vec;

    fn hex(s: &str) -> Vec<u8> {
        let s: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        s.chunks(2)
            .map(|c| u8::from_str_radix(core::str::from_utf8(c).unwrap(), 16).unwrap())
            .collect()
    }

    #[test]
    fn an_empty_list_is_its_size_alone() {
        let mut w = Writer::new(BufferType::NonDescribed);
        write_list::<Proc>(&mut w, &[]);
        assert_eq!(w.as_bytes(), [0x02, 0x00]);
        let mut r = Reader::new(&[0x02, 0x00], BufferType::NonDescribed, Limits::DEFAULT);
        assert_eq!(read_list::<Proc>(&mut r, "procs"), Ok(vec![]));
        assert!(r.is_empty());
    }

    #[test]
    fn a_list_of_more_processes_than_max_procs_is_refused_at_its_size() {
        let procs = vec![Proc::new("ns", 0); 3];
        let mut w = Writer::new(BufferType::NonDescribed);
        write_list(&mut w, &procs);
        let tight = Limits {
            max_procs: 2,
            ..Limits::DEFAULT
        };
        let mut r = Reader::new(w.as_bytes(), BufferType::NonDescribed, tight);
        let e = read_list::<Proc>(&mut r, "procs").unwrap_err();
        assert!(matches!(e.kind, ErrorKind::TooLarge { .. }), "{e}");
        assert_eq!(e.offset, 0, "refused at its SIZE");
        // Other lists are held to max_count, not max_procs.
        let mut w = Writer::new(BufferType::NonDescribed);
        let u = [crate::Uint32(1), crate::Uint32(2), crate::Uint32(3)];
        write_list(&mut w, &u);
        let mut r = Reader::new(w.as_bytes(), BufferType::NonDescribed, tight);
        assert_eq!(
            read_list::<crate::Uint32>(&mut r, "u32s").map(|v| v.len()),
            Ok(3)
        );
        let mut w = Writer::new(BufferType::NonDescribed);
        write_list(&mut w, &procs[..2]);
        let mut r = Reader::new(w.as_bytes(), BufferType::NonDescribed, tight);
        assert_eq!(read_list::<Proc>(&mut r, "procs").map(|v| v.len()), Ok(2));
    }

    #[test]
    fn a_list_or_a_commit_of_more_than_max_list_elements_is_refused_before_the_rest() {
        let tight = Limits {
            max_list: 2,
            ..Limits::DEFAULT
        };
        let u = [crate::Uint32(1), crate::Uint32(2), crate::Uint32(3)];
        let mut w = Writer::new(BufferType::NonDescribed);
        write_list(&mut w, &u);
        let mut r = Reader::new(w.as_bytes(), BufferType::NonDescribed, tight);
        let e = read_list::<crate::Uint32>(&mut r, "u32s").unwrap_err();
        assert!(matches!(e.kind, ErrorKind::TooLarge { .. }), "{e}");
        assert_eq!(e.offset, 0, "refused at its SIZE");
        // A commit's values have no SIZE: the third is refused where it starts.
        let commit = Commit {
            buckets: vec![CommitBucket {
                scope: crate::Scope::LOCAL,
                buffer_type: BufferType::NonDescribed,
                kvals: (0..3).map(|i| Kval::new("k", i as u32)).collect(),
            }],
        };
        let mut w = Writer::new(BufferType::NonDescribed);
        commit.write(&mut w);
        let mut r = Reader::new(w.as_bytes(), BufferType::NonDescribed, tight);
        let e = Commit::read(&mut r).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::TooLarge { .. }), "{e}");
        let two = Commit {
            buckets: vec![CommitBucket {
                kvals: commit.buckets[0].kvals[..2].to_vec(),
                ..commit.buckets[0].clone()
            }],
        };
        let mut w = Writer::new(BufferType::NonDescribed);
        two.write(&mut w);
        let mut r = Reader::new(w.as_bytes(), BufferType::NonDescribed, tight);
        assert_eq!(Commit::read(&mut r), Ok(two));
    }

    #[test]
    fn an_error_inside_a_byte_object_names_its_offset_in_the_payload() {
        // GETNB reply: STATUS 0, one byte object of 4 bytes holding a PROC pack
        // whose nspace string lacks its NUL (at payload offset 5).
        let bytes = hex("0200 02 04 02 04 61 62");
        let e = decode_reply(Command::GetNb, &bytes, &Codec::v422()).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::BadValue { .. }), "{e}");
        assert_eq!(e.offset, 5);
    }

    #[test]
    fn nested_blobs_count_against_the_depth_limit() {
        let job = JobInfo {
            nspace: WStr::from("ns"),
            items: vec![JobItem::Proc(ProcBlob::new(
                crate::value::Rank(0),
                vec![Kval::new("k", 1u32)],
            ))],
        };
        let codec = Codec::v422();
        let bytes = Reply::Req(job.clone()).encode(&codec).unwrap();
        assert_eq!(
            decode_reply(Command::Req, &bytes, &codec),
            Ok(Reply::Req(job))
        );
        let shallow = Codec {
            limits: Limits {
                max_depth: 2,
                ..Limits::DEFAULT
            },
            ..Codec::v422()
        };
        // The blob's values are decoded when asked for, at the depth they are at.
        let Ok(Reply::Req(j)) = decode_reply(Command::Req, &bytes, &shallow) else {
            panic!("the reply decodes, its blob's values packed")
        };
        let e = j.procs().next().unwrap().kvals().unwrap_err();
        assert_eq!(e.kind, ErrorKind::TooDeep { limit: 2 });
    }

    #[test]
    fn a_message_encodes_for_its_codecs_limits_nested_buffers_included() {
        // A topology whose support bytes are not the decoder's length is unencodable
        // (`value`'s tests), also inside a job blob inside a REQ reply.
        let t = Value::Topo(crate::value::Topo {
            xml: Some("<x/>".into()),
            support: vec![1; 4],
        });
        let kv = ProcBlob::new(crate::value::Rank(0), vec![Kval::new("k", t)]);
        let job = Reply::Req(JobInfo {
            nspace: "ns".into(),
            items: vec![JobItem::Proc(kv)],
        });
        let mut codec = Codec::v422();
        assert!(matches!(
            job.encode(&codec).map_err(|e| e.kind),
            Err(ErrorKind::Unencodable { .. })
        ));
        codec.limits = Limits {
            topo_support: 4,
            ..Limits::DEFAULT
        };
        let b = job.encode(&codec).unwrap();
        assert_eq!(decode_reply(Command::Req, &b, &codec), Ok(job));
    }

    #[test]
    fn a_value_that_cannot_be_encoded_inside_a_bucket_fails_the_whole_message() {
        // A DATA_ARRAY of UNDEF with an element is unencodable.
        let bad = DataArray {
            ty: DataType::Undef,
            items: vec![Value::Bool(true)],
        };
        let m = Request::Commit(Commit {
            buckets: vec![CommitBucket {
                scope: crate::value::Scope(1),
                buffer_type: BufferType::NonDescribed,
                kvals: vec![Kval::new("k", bad)],
            }],
        });
        assert!(matches!(
            m.encode(&Codec::v422()).unwrap_err().kind,
            ErrorKind::Unencodable { .. }
        ));
    }

    #[test]
    fn a_job_value_that_would_decode_as_a_typed_item_is_refused() {
        let m = Reply::Req(JobInfo {
            nspace: WStr::from("ns"),
            items: vec![JobItem::Value(Kval::new(
                NODE_ARRAY_KEY,
                DataArray::infos(vec![]),
            ))],
        });
        assert!(m.encode(&Codec::v422()).is_err());
    }
}
