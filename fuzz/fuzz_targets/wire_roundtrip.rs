//! Typed pmix-wire values and messages, built from an arbitrary recipe, encoded,
//! decoded, compared equal, and re-encoded to the same bytes.
//!
//! **Input.** An [`Unstructured`] recipe: the first choice picks the codec (both
//! buffer types × a 4.2.2 and a 4.2.4 peer), the next what to build: a [`Value`]
//! (every type of [`DataType::ALL`], nested up to [`MAX_DEPTH`] levels, DATA_ARRAYs
//! of every element type), a [`Request`] (every typed command and a raw one), a
//! [`Reply`] (every typed layout, the status-only reply, a raw one), an [`Event`]
//! or forwarded I/O ([`Iof`]). Lists hold at most [`MAX_LIST`] items, strings and
//! byte objects are arbitrary bytes (NULs included). pmix-wire has no `arbitrary`
//! dependency: the recipe is read here, through the crate's public constructors.
//!
//! **Checks.** When encoding succeeds (the encoders refuse, with
//! `ErrorKind::Unencodable`, what would not decode as itself: a raw message of a
//! typed command, a job-info value that reads as a typed item, a group message in
//! the other version's layout, a typed reply that is a lone STATUS, a DATA_ARRAY
//! element of another type…), decoding the bytes with the same codec succeeds,
//! gives a value equal to the one encoded, and that value encodes to the same
//! bytes. A value is one top-level pack of one VALUE, so the buffer type matters
//! for it too.
//!
//! **Not generated.** A TOPO's support bytes are always `Limits::topo_support`
//! long when it has XML (the encoder does not know the limits, and the decoder
//! reads exactly that many); a REGEX in its `blob:` form is only generated as the
//! plain string form (the blob's length rule is the decoder's business, checked by
//! wire_decode on the captures).
#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use pmix_wire::msg::{
    Abort, Alloc, Commit, CommitBucket, ComputeDeviceDistances, Connect, ConnectReply, DeregEvents,
    DistancesReply, FenceNb, GetCredential, GetCredentialReply, GetNb, GetNbReply, GroupConstruct,
    GroupConstructReply, GroupDestruct, GroupDestructReply, GroupLeave, InfoReply, IofDereg,
    IofPull, IofPullReply, IofPush, JobBlob, JobControl, JobInfo, JobItem, Log, Lookup,
    LookupReply, Monitor, Notify, ProcBlob, ProcCpuset, ProcData, Publish, QueryInfo, RegEvents,
    Spawn, SpawnReply, ValidateCred,
};
use pmix_wire::value::{AllocDirective, DataRange, IofChannel, Scope, Size, Time, Timeval, Uint32};
use pmix_wire::{
    App, Buffer, BufferType, ByteObject, Codec, Command, Coord, DataArray, DataType, DeviceDist,
    Element, Endpoint, Envar, Event, Geometry, GroupLayout, Info, InfoFlags, Iof, Kval, Limits,
    Pdata, Proc, ProcInfo, Query, Rank, Reader, Regattr, Regex, Reply, Request, Status, Topo,
    Value, Version, WStr, Writer, decode_event, decode_iof, decode_reply, decode_request,
};

/// How deep values nest inside values (the decoder allows `Limits::max_depth`).
const MAX_DEPTH: u32 = 4;
/// The most items of a generated list.
const MAX_LIST: u32 = 4;

struct G<'a, 'b> {
    u: &'b mut Unstructured<'a>,
    codec: Codec,
}

impl G<'_, '_> {
    fn n(&mut self) -> Result<usize> {
        Ok(self.u.int_in_range(0..=MAX_LIST)? as usize)
    }

    fn list<T>(&mut self, mut f: impl FnMut(&mut Self) -> Result<T>) -> Result<Vec<T>> {
        let n = self.n()?;
        (0..n).map(|_| f(self)).collect()
    }

    fn bytes(&mut self) -> Result<Vec<u8>> {
        let n = self.u.int_in_range(0..=24u8)?;
        Ok(self.u.bytes(n.into())?.to_vec())
    }

    /// A string: mostly printable keys like the wire's, sometimes any bytes.
    fn wstr(&mut self) -> Result<WStr> {
        if self.u.ratio(1, 8)? {
            return Ok(WStr::new(self.bytes()?));
        }
        const WORDS: &[&str] = &["pmix", "nspace", "rank", "hname", "locstr", "x", "", "0-3"];
        let n = self.u.int_in_range(1..=3u8)?;
        let mut s = Vec::new();
        for i in 0..n {
            if i > 0 {
                s.push(b'.');
            }
            s.extend_from_slice(self.u.choose(WORDS)?.as_bytes());
        }
        // Through a copy: well-known keys and short strings are held without
        // allocating, and must round-trip like the others.
        Ok(WStr::from(s.as_slice()))
    }

    fn opt_wstr(&mut self) -> Result<Option<WStr>> {
        Ok(if self.u.ratio(1, 5)? {
            None
        } else {
            Some(self.wstr()?)
        })
    }

    fn proc(&mut self) -> Result<Proc> {
        Ok(Proc {
            nspace: self.wstr()?,
            rank: Rank(self.u.arbitrary()?),
        })
    }

    fn info(&mut self, depth: u32) -> Result<Info> {
        Ok(Info {
            key: self.wstr()?,
            flags: InfoFlags(self.u.arbitrary()?),
            value: self.value(depth + 1)?,
        })
    }

    fn infos(&mut self, depth: u32) -> Result<Vec<Info>> {
        self.list(|g| g.info(depth))
    }

    fn kval(&mut self, depth: u32) -> Result<Kval> {
        Ok(Kval {
            key: self.wstr()?,
            value: self.value(depth + 1)?,
        })
    }

    fn kvals(&mut self, depth: u32) -> Result<Vec<Kval>> {
        self.list(|g| g.kval(depth))
    }

    fn coord(&mut self) -> Result<Coord> {
        Ok(Coord {
            view: self.u.arbitrary()?,
            coord: self.list(|g| g.u.arbitrary())?,
        })
    }

    fn device_dist(&mut self) -> Result<DeviceDist> {
        Ok(DeviceDist {
            uuid: self.opt_wstr()?,
            osname: self.opt_wstr()?,
            ty: self.u.arbitrary()?,
            mindist: self.u.arbitrary()?,
            maxdist: self.u.arbitrary()?,
        })
    }

    fn topo(&mut self) -> Result<Topo> {
        let xml = self.opt_wstr()?;
        let support = match xml {
            Some(_) => {
                let n = self.codec.limits.topo_support as usize;
                let mut v = self.u.bytes(n.min(self.u.len()))?.to_vec();
                v.resize(n, 0);
                v
            }
            None => Vec::new(),
        };
        Ok(Topo { xml, support })
    }

    fn buffer_type(&mut self) -> Result<BufferType> {
        Ok(if self.u.arbitrary()? {
            BufferType::FullyDescribed
        } else {
            BufferType::NonDescribed
        })
    }

    /// A value of any type.
    fn value(&mut self, depth: u32) -> Result<Value> {
        let ty = *self.u.choose(DataType::ALL)?;
        self.value_of(ty, depth)
    }

    /// A value of type `ty` (UNDEF when `ty` needs nesting past [`MAX_DEPTH`]).
    fn value_of(&mut self, ty: DataType, depth: u32) -> Result<Value> {
        use DataType as T;
        let deep = depth >= MAX_DEPTH;
        let u = &mut *self.u;
        Ok(match ty {
            T::Undef => Value::Undef,
            T::Bool => Value::Bool(u.arbitrary()?),
            T::Byte => Value::Byte(u.arbitrary()?),
            T::String => Value::String(self.opt_wstr()?),
            T::Size => Value::Size(u.arbitrary()?),
            T::Pid => Value::Pid(u.arbitrary()?),
            T::Int => Value::Int(u.arbitrary()?),
            T::Int8 => Value::Int8(u.arbitrary()?),
            T::Int16 => Value::Int16(u.arbitrary()?),
            T::Int32 => Value::Int32(u.arbitrary()?),
            T::Int64 => Value::Int64(u.arbitrary()?),
            T::Uint => Value::Uint(u.arbitrary()?),
            T::Uint8 => Value::Uint8(u.arbitrary()?),
            T::Uint16 => Value::Uint16(u.arbitrary()?),
            T::Uint32 => Value::Uint32(u.arbitrary()?),
            T::Uint64 => Value::Uint64(u.arbitrary()?),
            T::Float => {
                if u.arbitrary()? {
                    Value::float(u.arbitrary()?)
                } else {
                    Value::Float(self.wstr()?)
                }
            }
            T::Double => {
                if u.arbitrary()? {
                    Value::double(u.arbitrary()?)
                } else {
                    Value::Double(self.wstr()?)
                }
            }
            T::Timeval => Value::Timeval(Timeval {
                sec: u.arbitrary()?,
                usec: u.arbitrary()?,
            }),
            T::Time => Value::Time(u.arbitrary()?),
            T::Status => Value::Status(u.arbitrary()?),
            T::Value if !deep => Value::Value(Box::new(self.value(depth + 1)?)),
            T::Proc => Value::Proc(self.proc()?),
            T::App if !deep => Value::App(Box::new(App {
                cmd: self.opt_wstr()?,
                argv: self.list(G::wstr)?,
                env: self.list(G::wstr)?,
                cwd: self.opt_wstr()?,
                maxprocs: self.u.arbitrary()?,
                info: self.infos(depth + 1)?,
            })),
            T::Info if !deep => Value::Info(Box::new(self.info(depth)?)),
            T::Pdata if !deep => Value::Pdata(Box::new(Pdata {
                proc: self.proc()?,
                key: self.wstr()?,
                value: self.value(depth + 1)?,
            })),
            T::Buffer => Value::Buffer(Buffer {
                ty: self.buffer_type()?,
                bytes: self.bytes()?,
            }),
            T::ByteObject => Value::ByteObject(ByteObject(self.bytes()?)),
            T::Kval if !deep => Value::Kval(Box::new(self.kval(depth)?)),
            T::Persist => Value::Persist(u.arbitrary()?),
            T::Pointer => Value::Pointer,
            T::Scope => Value::Scope(u.arbitrary()?),
            T::DataRange => Value::DataRange(u.arbitrary()?),
            T::Command => Value::Command(*u.choose(Command::ALL)?),
            T::InfoDirectives => Value::InfoDirectives(u.arbitrary()?),
            T::DataType => Value::DataType(*u.choose(DataType::ALL)?),
            T::ProcState => Value::ProcState(u.arbitrary()?),
            T::ProcInfo => Value::ProcInfo(Box::new(ProcInfo {
                proc: self.proc()?,
                hostname: self.opt_wstr()?,
                executable: self.opt_wstr()?,
                pid: pmix_wire::value::Pid(self.u.arbitrary()?),
                state: self.u.arbitrary()?,
            })),
            T::DataArray if !deep => {
                let ety = *u.choose(DataType::ALL)?;
                let items = if ety == T::Undef {
                    Vec::new()
                } else {
                    self.list(|g| g.value_of(ety, depth + 1))?
                };
                // Nesting past the depth gives UNDEF items: keep the array typed.
                let ety = items.first().map_or(ety, Value::data_type);
                let items = items.into_iter().filter(|v| v.data_type() == ety).collect();
                match DataArray::new(ety, items) {
                    Some(a) => Value::DataArray(a),
                    None => Value::Undef,
                }
            }
            T::ProcRank => Value::ProcRank(u.arbitrary()?),
            T::Query if !deep => Value::Query(Box::new(Query {
                keys: self.list(G::wstr)?,
                qualifiers: self.infos(depth + 1)?,
            })),
            T::CompressedString => Value::CompressedString(self.bytes()?),
            T::AllocDirective => Value::AllocDirective(u.arbitrary()?),
            T::IofChannel => Value::IofChannel(u.arbitrary()?),
            T::Envar => Value::Envar(Envar {
                envar: self.opt_wstr()?,
                value: self.opt_wstr()?,
                separator: self.u.arbitrary()?,
            }),
            T::Coord => Value::Coord(self.coord()?),
            T::Regattr => Value::Regattr(Box::new(Regattr {
                name: self.opt_wstr()?,
                string: self.opt_wstr()?,
                ty: *self.u.choose(DataType::ALL)?,
                description: self.list(G::wstr)?,
            })),
            T::Regex => Value::Regex(match u.int_in_range(0..=2u8)? {
                0 => {
                    let mut s = if u.arbitrary()? {
                        b"pmix".to_vec()
                    } else {
                        b"raw:".to_vec()
                    };
                    s.extend(self.wstr()?.into_bytes());
                    Regex::Raw(WStr::new(s))
                }
                _ => Regex::Packed(self.opt_wstr()?),
            }),
            T::JobState => Value::JobState(u.arbitrary()?),
            T::LinkState => Value::LinkState(u.arbitrary()?),
            T::ProcCpuset => Value::ProcCpuset(self.opt_wstr()?),
            T::Geometry => Value::Geometry(Box::new(Geometry {
                fabric: self.u.arbitrary()?,
                uuid: self.opt_wstr()?,
                osname: self.opt_wstr()?,
                coordinates: self.list(G::coord)?,
            })),
            T::DeviceDist => Value::DeviceDist(Box::new(self.device_dist()?)),
            T::Endpoint => Value::Endpoint(Box::new(Endpoint {
                uuid: self.opt_wstr()?,
                osname: self.opt_wstr()?,
                endpt: self.bytes()?,
            })),
            T::Topo => Value::Topo(self.topo()?),
            T::DevType => Value::DevType(u.arbitrary()?),
            T::LocType => Value::LocType(u.arbitrary()?),
            T::CompressedByteObject => Value::CompressedByteObject(self.bytes()?),
            T::ProcNspace => Value::ProcNspace(self.wstr()?),
            T::DataBuffer => Value::DataBuffer(self.bytes()?),
            T::StorMedium => Value::StorMedium(u.arbitrary()?),
            T::StorAccess => Value::StorAccess(u.arbitrary()?),
            T::StorPersist => Value::StorPersist(u.arbitrary()?),
            T::StorAccessType => Value::StorAccessType(u.arbitrary()?),
            // Too deep, or a type added after this harness.
            _ => Value::Undef,
        })
    }

    fn members(&mut self) -> Result<Option<Vec<Proc>>> {
        // Mostly the codec's layout; sometimes the other one (encoding refuses it).
        let v424 = self.codec.version.group_layout() == GroupLayout::V424;
        let members = if self.u.ratio(1, 8)? { !v424 } else { v424 };
        Ok(if members {
            Some(self.list(G::proc)?)
        } else {
            None
        })
    }

    fn request(&mut self) -> Result<Request> {
        let d = 1;
        Ok(match self.u.int_in_range(0..=29u8)? {
            0 => Request::Req,
            1 => Request::Abort(Abort {
                status: Status(self.u.arbitrary()?),
                message: self.opt_wstr()?,
                procs: self.list(G::proc)?,
            }),
            2 => Request::Commit(Commit {
                buckets: self.list(|g| {
                    Ok(CommitBucket {
                        scope: Scope(g.u.arbitrary()?),
                        buffer_type: g.buffer_type()?,
                        kvals: g.kvals(d)?,
                    })
                })?,
            }),
            3 => Request::FenceNb(FenceNb {
                procs: self.list(G::proc)?,
                info: self.infos(d)?,
            }),
            4 => Request::GetNb(GetNb {
                nspace: self.wstr()?,
                rank: Rank(self.u.arbitrary()?),
                info: self.infos(d)?,
                key: self.opt_wstr()?,
            }),
            5 => Request::Finalize,
            6 => Request::Publish(Publish {
                uid: Uint32(self.u.arbitrary()?),
                info: self.infos(d)?,
            }),
            7 | 8 => {
                let l = Lookup {
                    uid: Uint32(self.u.arbitrary()?),
                    keys: self.list(G::wstr)?,
                    info: self.infos(d)?,
                };
                if self.u.arbitrary()? {
                    Request::Lookup(l)
                } else {
                    Request::Unpublish(l)
                }
            }
            9 => Request::Spawn(Spawn {
                info: self.infos(d)?,
                apps: self.list(|g| {
                    Ok(App {
                        cmd: g.opt_wstr()?,
                        argv: g.list(G::wstr)?,
                        env: g.list(G::wstr)?,
                        cwd: g.opt_wstr()?,
                        maxprocs: g.u.arbitrary()?,
                        info: g.infos(d)?,
                    })
                })?,
            }),
            10 | 11 => {
                let c = Connect {
                    procs: self.list(G::proc)?,
                    info: self.infos(d)?,
                };
                if self.u.arbitrary()? {
                    Request::Connect(c)
                } else {
                    Request::Disconnect(c)
                }
            }
            12 => Request::Notify(Notify {
                status: Status(self.u.arbitrary()?),
                range: DataRange(self.u.arbitrary()?),
                info: self.infos(d)?,
            }),
            13 => Request::RegEvents(RegEvents {
                codes: self.list(|g| Ok(Status(g.u.arbitrary()?)))?,
                info: self.infos(d)?,
            }),
            14 => Request::DeregEvents(DeregEvents {
                codes: self.list(|g| Ok(Status(g.u.arbitrary()?)))?,
            }),
            15 => Request::Query(QueryInfo {
                queries: self.list(|g| {
                    Ok(Query {
                        keys: g.list(G::wstr)?,
                        qualifiers: g.infos(d)?,
                    })
                })?,
            }),
            16 => Request::Log(Log {
                timestamp: Time(self.u.arbitrary()?),
                data: self.infos(d)?,
                directives: self.infos(d)?,
            }),
            17 => Request::Alloc(Alloc {
                directive: AllocDirective(self.u.arbitrary()?),
                info: self.infos(d)?,
            }),
            18 => Request::JobControl(JobControl {
                targets: self.list(G::proc)?,
                directives: self.infos(d)?,
            }),
            19 => Request::Monitor(Monitor {
                monitor: self.info(d)?,
                error: Status(self.u.arbitrary()?),
                directives: self.infos(d)?,
            }),
            20 => Request::GetCredential(GetCredential {
                info: self.infos(d)?,
            }),
            21 => Request::ValidateCred(ValidateCred {
                cred: ByteObject(self.bytes()?),
                directives: self.infos(d)?,
            }),
            22 => Request::IofPull(IofPull {
                procs: self.list(G::proc)?,
                directives: self.infos(d)?,
                channel: IofChannel(self.u.arbitrary()?),
                local_id: Size(self.u.arbitrary()?),
            }),
            23 => Request::IofPush(IofPush {
                targets: self.list(G::proc)?,
                directives: self.infos(d)?,
                data: if self.u.arbitrary()? {
                    Some(ByteObject(self.bytes()?))
                } else {
                    None
                },
            }),
            24 => Request::GroupConstruct(GroupConstruct {
                grp: self.wstr()?,
                procs: self.list(G::proc)?,
                info: self.infos(d)?,
            }),
            25 => Request::GroupLeave(GroupLeave {
                grp: self.wstr()?,
                info: self.infos(d)?,
            }),
            26 => Request::GroupDestruct(GroupDestruct {
                grp: self.wstr()?,
                members: self.members()?,
                info: self.infos(d)?,
            }),
            27 => Request::IofDereg(IofDereg {
                directives: self.infos(d)?,
                remote_id: Size(self.u.arbitrary()?),
            }),
            28 => Request::ComputeDeviceDistances(ComputeDeviceDistances {
                topo: self.topo()?,
                cpuset: ProcCpuset(self.opt_wstr()?),
                info: self.infos(d)?,
            }),
            _ => Request::Raw {
                command: *self.u.choose(Command::ALL)?,
                bytes: self.bytes()?,
            },
        })
    }

    fn job_item(&mut self) -> Result<JobItem> {
        let d = 1;
        Ok(match self.u.int_in_range(0..=4u8)? {
            0 => JobItem::Value(self.kval(d)?),
            1 => JobItem::Session(self.infos(d)?),
            2 => JobItem::Node(self.infos(d)?),
            3 => JobItem::App(self.infos(d)?),
            _ => JobItem::Proc(ProcBlob::new(
                Rank(self.u.arbitrary()?),
                self.kvals(d + 1)?,
            )),
        })
    }

    fn reply(&mut self) -> Result<Reply> {
        let d = 1;
        let status = Status(self.u.arbitrary()?);
        let info_reply = |g: &mut Self| -> Result<InfoReply> {
            Ok(InfoReply {
                status,
                info: g.infos(d)?,
            })
        };
        Ok(match self.u.int_in_range(0..=16u8)? {
            0 => Reply::Status {
                command: *self.u.choose(Command::ALL)?,
                status,
            },
            1 => Reply::Req(JobInfo {
                nspace: self.wstr()?,
                items: self.list(G::job_item)?,
            }),
            2 => Reply::GetNb(GetNbReply {
                status,
                data: self.list(|g| {
                    Ok(ProcData {
                        proc: g.proc()?,
                        kvals: g.kvals(d)?,
                    })
                })?,
            }),
            3 => Reply::Lookup(LookupReply {
                status,
                data: self.list(|g| {
                    Ok(Pdata {
                        proc: g.proc()?,
                        key: g.wstr()?,
                        value: g.value(d)?,
                    })
                })?,
            }),
            4 => Reply::Spawn(SpawnReply {
                status,
                nspace: self.opt_wstr()?,
                kvals: self.kvals(d)?,
            }),
            5 => Reply::Connect(ConnectReply {
                status,
                jobs: self.list(|g| {
                    Ok(JobBlob {
                        nspace: g.wstr()?,
                        kvals: g.kvals(d)?,
                    })
                })?,
            }),
            6 => Reply::Query(info_reply(self)?),
            7 => Reply::Alloc(info_reply(self)?),
            8 => Reply::JobControl(info_reply(self)?),
            9 => Reply::Monitor(info_reply(self)?),
            10 => Reply::GetCredential(GetCredentialReply {
                status,
                cred: ByteObject(self.bytes()?),
                info: self.infos(d)?,
            }),
            11 => Reply::ValidateCred(info_reply(self)?),
            12 => Reply::IofPull(IofPullReply {
                status,
                remote_id: Size(self.u.arbitrary()?),
            }),
            13 => Reply::GroupConstruct(GroupConstructReply {
                status,
                members: self.members()?,
                ctxid: if self.u.arbitrary()? {
                    Some(Size(self.u.arbitrary()?))
                } else {
                    None
                },
            }),
            14 => Reply::GroupDestruct(GroupDestructReply {
                status,
                ctxid: Size(self.u.arbitrary()?),
            }),
            15 => Reply::ComputeDeviceDistances(DistancesReply {
                status,
                dists: self.list(G::device_dist)?,
            }),
            _ => Reply::Raw {
                command: *self.u.choose(Command::ALL)?,
                bytes: self.bytes()?,
            },
        })
    }
}

fn codec(described: bool, v424: bool) -> Codec {
    let mut c = Codec::v422();
    if described {
        c.buffer_type = BufferType::FullyDescribed;
    }
    if v424 {
        c.version = Version::parse("4.2.4", 0).expect("a version");
    }
    c
}

/// Encodes `m`; when that succeeds, decodes the bytes, compares, re-encodes.
fn check<T: PartialEq + std::fmt::Debug, E: std::fmt::Debug>(
    m: &T,
    encode: impl Fn(&T) -> std::result::Result<Vec<u8>, E>,
    decode: impl Fn(&[u8]) -> std::result::Result<T, E>,
) {
    let Ok(bytes) = encode(m) else { return };
    let back = match decode(&bytes) {
        Ok(b) => b,
        Err(e) => panic!("{m:?} encodes to {bytes:02x?}, which does not decode: {e:?}"),
    };
    assert_eq!(&back, m, "decoded from {bytes:02x?}");
    let again = encode(&back).expect("a decoded message encodes");
    assert_eq!(again, bytes, "{m:?} re-encodes to its bytes");
}

fn run(u: &mut Unstructured<'_>) -> Result<()> {
    let codec = codec(u.arbitrary()?, u.arbitrary()?);
    let c = codec.clone();
    let mut g = G { u, codec };
    match g.u.int_in_range(0..=4u8)? {
        0 => {
            let v = g.value(0)?;
            check(
                &v,
                |v| {
                    let mut w = Writer::new(c.buffer_type);
                    w.pack_one(v);
                    w.finish()
                },
                |b| {
                    let mut r = Reader::new(b, c.buffer_type, Limits::DEFAULT);
                    let v = r.unpack_one::<Value>("value")?;
                    r.finish()?;
                    Ok(v)
                },
            );
            // The element alone, as inside a DATA_ARRAY, too.
            let mut w = Writer::new(c.buffer_type);
            v.encode(&mut w);
            if let Ok(b) = w.finish() {
                let mut r = Reader::new(&b, c.buffer_type, Limits::DEFAULT);
                let back = Value::decode(&mut r).expect("a value element decodes");
                assert_eq!(back, v);
                assert!(r.is_empty());
            }
        }
        1 => {
            let m = g.request()?;
            check(&m, |m| m.encode(&c), |b| decode_request(b, &c));
        }
        2 => {
            let m = g.reply()?;
            let cmd = m.command();
            check(&m, |m| m.encode(&c), |b| decode_reply(cmd, b, &c));
        }
        3 => {
            let m = Event {
                status: Status(g.u.arbitrary()?),
                source: g.proc()?,
                info: g.infos(1)?,
                range: if g.u.arbitrary()? {
                    Some(DataRange(g.u.arbitrary()?))
                } else {
                    None
                },
            };
            check(&m, |m| m.encode(&c), |b| decode_event(b, &c));
        }
        _ => {
            let m = Iof {
                source: g.proc()?,
                channel: IofChannel(g.u.arbitrary()?),
                request_id: Size(g.u.arbitrary()?),
                info: g.infos(1)?,
                data: ByteObject(g.bytes()?),
            };
            check(&m, |m| m.encode(&c), |b| decode_iof(b, &c));
        }
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let _ = run(&mut u);
});
