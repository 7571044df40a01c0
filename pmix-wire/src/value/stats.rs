//! The statistics elements: [`ProcStats`], [`DiskStats`], [`NetStats`] and
//! [`NodeStats`], field by field in the order OpenPMIx packs them
//! (`pmix_bfrops_base_pack_pstats`, `_dkstats`, `_netstats`, `_ndstats` in
//! `src/mca/bfrops/base/bfrop_base_pack.c`, the same in 4.2.x and the 5.x
//! libraries that speak bfrops v4.1 to it).
//!
//! FLOAT fields travel as the `printf("%f")` text of the number and are kept as
//! that text ([`WStr`], never NULL), so they re-encode exactly.

use alloc::vec::Vec;

use super::count::{put_vu_count, vu_count};
use super::wstr::{opt_str, put_opt_str, put_str, req_str};
use super::{Pid, Proc, Timeval, WStr};
use crate::buf::{Element, Reader, Writer};
use crate::error::WireError;
use crate::types::DataType;

/// PROC_STATS (`pmix_proc_stats_t`): node STRING, PROC, PID (tagged), cmd STRING,
/// state BYTE, time TIMEVAL, priority INT32, num_threads INT16, pss, vsize and rss
/// FLOAT, processor INT16, sample_time TIMEVAL.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ProcStats {
    /// The node (NULL if unset).
    pub node: Option<WStr>,
    /// The process.
    pub proc: Proc,
    /// Its pid.
    pub pid: Pid,
    /// Its command (NULL if unset).
    pub cmd: Option<WStr>,
    /// Its state, as `ps` shows it (`R`, `S`, …).
    pub state: u8,
    /// CPU time used.
    pub time: Timeval,
    /// Scheduling priority.
    pub priority: i32,
    /// Threads.
    pub num_threads: i16,
    /// Proportional set size (FLOAT text).
    pub pss: WStr,
    /// Virtual size (FLOAT text).
    pub vsize: WStr,
    /// Resident set size (FLOAT text).
    pub rss: WStr,
    /// The processor it last ran on.
    pub processor: i16,
    /// When the sample was taken.
    pub sample_time: Timeval,
}

impl Element for ProcStats {
    const TYPE: DataType = DataType::ProcStats;

    fn encode(&self, w: &mut Writer) {
        put_opt_str(w, &self.node);
        self.proc.encode(w);
        self.pid.encode(w);
        put_opt_str(w, &self.cmd);
        w.u8(self.state);
        self.time.encode(w);
        w.zigzag(self.priority.into());
        w.zigzag(self.num_threads.into());
        put_str(w, &self.pss);
        put_str(w, &self.vsize);
        put_str(w, &self.rss);
        w.zigzag(self.processor.into());
        self.sample_time.encode(w);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(ProcStats {
            node: opt_str(r, "proc stats node")?,
            proc: Proc::decode(r)?,
            pid: Pid::decode(r)?,
            cmd: opt_str(r, "proc stats cmd")?,
            state: r.u8("proc stats state")?,
            time: Timeval::decode(r)?,
            priority: r.zigzag(32, "proc stats priority")? as i32,
            num_threads: r.zigzag(16, "proc stats threads")? as i16,
            pss: req_str(r, "proc stats pss")?,
            vsize: req_str(r, "proc stats vsize")?,
            rss: req_str(r, "proc stats rss")?,
            processor: r.zigzag(16, "proc stats processor")? as i16,
            sample_time: Timeval::decode(r)?,
        })
    }
}

/// DISK_STATS (`pmix_disk_stats_t`): the disk's name, then eleven UINT64 counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct DiskStats {
    /// The disk (NULL if unset).
    pub disk: Option<WStr>,
    /// Reads completed.
    pub num_reads_completed: u64,
    /// Reads merged.
    pub num_reads_merged: u64,
    /// Sectors read.
    pub num_sectors_read: u64,
    /// Milliseconds spent reading.
    pub milliseconds_reading: u64,
    /// Writes completed.
    pub num_writes_completed: u64,
    /// Writes merged.
    pub num_writes_merged: u64,
    /// Sectors written.
    pub num_sectors_written: u64,
    /// Milliseconds spent writing.
    pub milliseconds_writing: u64,
    /// I/Os in progress.
    pub num_ios_in_progress: u64,
    /// Milliseconds spent doing I/O.
    pub milliseconds_io: u64,
    /// Weighted milliseconds spent doing I/O.
    pub weighted_milliseconds_io: u64,
}

impl DiskStats {
    /// The counters in wire order.
    fn counters(&self) -> [u64; 11] {
        [
            self.num_reads_completed,
            self.num_reads_merged,
            self.num_sectors_read,
            self.milliseconds_reading,
            self.num_writes_completed,
            self.num_writes_merged,
            self.num_sectors_written,
            self.milliseconds_writing,
            self.num_ios_in_progress,
            self.milliseconds_io,
            self.weighted_milliseconds_io,
        ]
    }
}

impl Element for DiskStats {
    const TYPE: DataType = DataType::DiskStats;

    fn encode(&self, w: &mut Writer) {
        put_opt_str(w, &self.disk);
        for c in self.counters() {
            w.varint(c);
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let disk = opt_str(r, "disk stats disk")?;
        let mut c = [0u64; 11];
        for v in &mut c {
            *v = r.varint(64, "disk stats counter")?;
        }
        let [
            num_reads_completed,
            num_reads_merged,
            num_sectors_read,
            milliseconds_reading,
            num_writes_completed,
            num_writes_merged,
            num_sectors_written,
            milliseconds_writing,
            num_ios_in_progress,
            milliseconds_io,
            weighted_milliseconds_io,
        ] = c;
        Ok(DiskStats {
            disk,
            num_reads_completed,
            num_reads_merged,
            num_sectors_read,
            milliseconds_reading,
            num_writes_completed,
            num_writes_merged,
            num_sectors_written,
            milliseconds_writing,
            num_ios_in_progress,
            milliseconds_io,
            weighted_milliseconds_io,
        })
    }
}

/// NET_STATS (`pmix_net_stats_t`): the interface's name, then six UINT64 counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct NetStats {
    /// The interface (NULL if unset).
    pub net_interface: Option<WStr>,
    /// Bytes received.
    pub num_bytes_recvd: u64,
    /// Packets received.
    pub num_packets_recvd: u64,
    /// Receive errors.
    pub num_recv_errs: u64,
    /// Bytes sent.
    pub num_bytes_sent: u64,
    /// Packets sent.
    pub num_packets_sent: u64,
    /// Send errors.
    pub num_send_errs: u64,
}

impl Element for NetStats {
    const TYPE: DataType = DataType::NetStats;

    fn encode(&self, w: &mut Writer) {
        put_opt_str(w, &self.net_interface);
        for c in [
            self.num_bytes_recvd,
            self.num_packets_recvd,
            self.num_recv_errs,
            self.num_bytes_sent,
            self.num_packets_sent,
            self.num_send_errs,
        ] {
            w.varint(c);
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(NetStats {
            net_interface: opt_str(r, "net stats interface")?,
            num_bytes_recvd: r.varint(64, "net stats counter")?,
            num_packets_recvd: r.varint(64, "net stats counter")?,
            num_recv_errs: r.varint(64, "net stats counter")?,
            num_bytes_sent: r.varint(64, "net stats counter")?,
            num_packets_sent: r.varint(64, "net stats counter")?,
            num_send_errs: r.varint(64, "net stats counter")?,
        })
    }
}

/// NODE_STATS (`pmix_node_stats_t`): the node's name, eleven FLOATs (load averages
/// and memory figures), the sample time, then the disk statistics and the network
/// statistics, each a SIZE count and the elements.
///
/// OpenPMIx 4.2 packs a non-empty `diskstats` array from the address of its
/// pointer (`&ptr[i].diskstats`), so a C sender with disk statistics writes
/// garbage; this codec writes the elements the count promises, which is what the
/// C unpacker reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeStats {
    /// The node (NULL if unset).
    pub node: Option<WStr>,
    /// Load average over 1 minute (FLOAT text).
    pub la: WStr,
    /// Over 5 minutes.
    pub la5: WStr,
    /// Over 15 minutes.
    pub la15: WStr,
    /// Total memory.
    pub total_mem: WStr,
    /// Free memory.
    pub free_mem: WStr,
    /// Buffers.
    pub buffers: WStr,
    /// Cached.
    pub cached: WStr,
    /// Swap cached.
    pub swap_cached: WStr,
    /// Swap total.
    pub swap_total: WStr,
    /// Swap free.
    pub swap_free: WStr,
    /// Mapped.
    pub mapped: WStr,
    /// When the sample was taken.
    pub sample_time: Timeval,
    /// Per-disk statistics.
    pub diskstats: Vec<DiskStats>,
    /// Per-interface statistics.
    pub netstats: Vec<NetStats>,
}

impl Element for NodeStats {
    const TYPE: DataType = DataType::NodeStats;

    fn encode(&self, w: &mut Writer) {
        put_opt_str(w, &self.node);
        for f in [
            &self.la,
            &self.la5,
            &self.la15,
            &self.total_mem,
            &self.free_mem,
            &self.buffers,
            &self.cached,
            &self.swap_cached,
            &self.swap_total,
            &self.swap_free,
            &self.mapped,
        ] {
            put_str(w, f);
        }
        self.sample_time.encode(w);
        put_vu_count(w, self.diskstats.len());
        for d in &self.diskstats {
            d.encode(w);
        }
        put_vu_count(w, self.netstats.len());
        for n in &self.netstats {
            n.encode(w);
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let node = opt_str(r, "node stats node")?;
        let mut f = || req_str(r, "node stats figure");
        let (la, la5, la15) = (f()?, f()?, f()?);
        let (total_mem, free_mem, buffers, cached) = (f()?, f()?, f()?, f()?);
        let (swap_cached, swap_total, swap_free, mapped) = (f()?, f()?, f()?, f()?);
        let sample_time = Timeval::decode(r)?;
        let n = vu_count(r, "node stats ndiskstats")?;
        let mut diskstats = Vec::with_capacity(r.capacity_for(n));
        for _ in 0..n {
            diskstats.push(DiskStats::decode(r)?);
        }
        let n = vu_count(r, "node stats nnetstats")?;
        let mut netstats = Vec::with_capacity(r.capacity_for(n));
        for _ in 0..n {
            netstats.push(NetStats::decode(r)?);
        }
        Ok(NodeStats {
            node,
            la,
            la5,
            la15,
            total_mem,
            free_mem,
            buffers,
            cached,
            swap_cached,
            swap_total,
            swap_free,
            mapped,
            sample_time,
            diskstats,
            netstats,
        })
    }
}
