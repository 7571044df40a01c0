//! Topologies and cpusets: `PMIx_Load_topology`, `PMIx_Topology_destruct`,
//! `PMIx_Parse_cpuset_string`, `PMIx_Get_cpuset`, `PMIx_Cpuset_destruct`.

use std::ffi::c_char;

use pmix::{BindEnvelope, Mode, PmixError, global};
use pmix_core::CpuSet;

use crate::boundary::{BAD_PARAM, export, opt_mut, try_mut, try_str};
use crate::client::objects::{
    check_fillable_topology, destruct_cpuset, destruct_topology, store_cpuset, store_topology,
};
use crate::types::{pmix_bind_envelope_t, pmix_cpuset_t, pmix_topology_t};

/// The longest cpuset string accepted: an hwloc mask of every PU a set can name
/// (2^20 bits, 360 KiB) fits.
const MAX_CPUSET_STRING: usize = 1 << 20;

export! {
    /// `PMIx_Load_topology`: fills `topo` with the library's topology, loaded once.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`, `PMIX_ERR_WOULD_BLOCK`, `PMIX_ERR_NOT_AVAILABLE`;
    /// `PMIX_ERR_BAD_PARAM` (NULL `topo`, or a `source` that is neither NULL nor ours);
    /// `PMIX_ERR_UNREACH` (the topology cannot be loaded and there is no server).
    ///
    /// # C contract
    /// `topo` is NULL or points to a readable, writable struct.
    fn PMIx_Load_topology(topo: *mut pmix_topology_t) -> pmix_status_t {
        let inst = global::get().map_err(|e| e.status())?;
        inst.admit("PMIx_Load_topology", Mode::Blocking)
            .map_err(|e| e.status())?;
        let t = try_mut!(topo)?;
        check_fillable_topology(t)?;
        let loaded = inst.topology().map_err(|e| e.status())?;
        store_topology(t, &loaded)
    }
}

export! {
    /// `PMIx_Topology_destruct`: clears a topology filled by [`PMIx_Load_topology`] (the
    /// library keeps the topology). NULL or foreign: nothing happens.
    ///
    /// # C contract
    /// `topo` is NULL or points to a readable, writable struct.
    fn PMIx_Topology_destruct(topo: *mut pmix_topology_t) {
        if let Some(t) = opt_mut!(topo) {
            destruct_topology(t);
        }
    }
}

export! {
    /// `PMIx_Parse_cpuset_string`: `"hwloc:<list>"` or `"hwloc:0x<mask>"` (prefix in any
    /// case) into a cpuset of the library's.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`; `PMIX_ERR_BAD_PARAM` (a NULL argument, no NUL within 1 MiB,
    /// another prefix, a list or mask that does not parse).
    ///
    /// # C contract
    /// `cpuset_string` is NULL or readable up to its NUL (or 1 MiB + 1 bytes); `cpuset` is
    /// NULL or writable.
    fn PMIx_Parse_cpuset_string(
        cpuset_string: *const c_char,
        cpuset: *mut pmix_cpuset_t,
    ) -> pmix_status_t {
        global::get().map_err(|e| e.status())?;
        let out = try_mut!(cpuset)?;
        let s = try_str!(cpuset_string, MAX_CPUSET_STRING)?;
        let body = CpuSet::strip_hwloc_prefix(s).ok_or(BAD_PARAM)?;
        let set = CpuSet::parse_pmix(body).map_err(|_| BAD_PARAM)?;
        store_cpuset(out, set)
    }
}

export! {
    /// `PMIx_Get_cpuset`: the process's (`PMIX_CPUBIND_PROCESS`) or calling thread's
    /// (`PMIX_CPUBIND_THREAD`) binding, as a cpuset of the library's.
    ///
    /// # Errors
    /// `PMIX_ERR_INIT`; `PMIX_ERR_BAD_PARAM` (NULL `cpuset`, unknown `reference`);
    /// `PMIX_ERR_UNREACH` (the OS does not tell).
    ///
    /// # C contract
    /// `cpuset` is NULL or writable.
    fn PMIx_Get_cpuset(
        cpuset: *mut pmix_cpuset_t,
        reference: pmix_bind_envelope_t,
    ) -> pmix_status_t {
        let inst = global::get().map_err(|e| e.status())?;
        let out = try_mut!(cpuset)?;
        let envelope = BindEnvelope::from_raw(reference).ok_or(BAD_PARAM)?;
        let set = inst.cpuset(envelope).map_err(|e| e.status())?;
        store_cpuset(out, set)
    }
}

export! {
    /// `PMIx_Cpuset_destruct`: releases a cpuset of the library's and clears the struct.
    /// NULL, foreign or already destructed: nothing happens.
    ///
    /// # C contract
    /// `cpuset` is NULL or points to a readable, writable struct.
    fn PMIx_Cpuset_destruct(cpuset: *mut pmix_cpuset_t) {
        if let Some(c) = opt_mut!(cpuset) {
            destruct_cpuset(c);
        }
    }
}

export! {
    /// `PMIx_Get_relative_locality`: what the processes of locality strings
    /// `locality1` and `locality2` (`PMIX_LOCALITY_STRING`, OpenPMIx 4.2's `hwloc:`
    /// format) share, as `PMIX_LOCALITY_SHARE_*` bits in `*locality`
    /// (`pmix_core::locality`). libpmix2 4.2.2 computes the same bits but returns
    /// `PMIX_ERR_TAKE_NEXT_OPTION`; this returns `PMIX_SUCCESS`.
    ///
    /// # Errors
    /// `PMIX_ERR_BAD_PARAM` (a NULL argument, a string that is not UTF-8 or not a
    /// locality string: `*locality` is then `PMIX_LOCALITY_UNKNOWN`).
    ///
    /// # C contract
    /// `locality1` and `locality2` are NULL or NUL-terminated strings; `locality` is
    /// NULL or writable.
    fn PMIx_Get_relative_locality(
        locality1: *const c_char,
        locality2: *const c_char,
        locality: *mut u16,
    ) -> pmix_status_t {
        let out = try_mut!(locality)?;
        *out = 0;
        let (a, b) = (
            try_str!(locality1, MAX_CPUSET_STRING)?,
            try_str!(locality2, MAX_CPUSET_STRING)?,
        );
        *out = pmix_core::locality::relative_locality(a, b)
            .map_err(|e| e.status())?
            .0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relative(a: &std::ffi::CStr, b: &std::ffi::CStr) -> (crate::types::pmix_status_t, u16) {
        let mut loc = 0xffff;
        let rc = PMIx_Get_relative_locality(a.as_ptr(), b.as_ptr(), &mut loc);
        (rc, loc)
    }

    #[test]
    fn relative_locality_succeeds_with_the_shared_bits_and_refuses_other_strings() {
        let a = c"hwloc:SK0:L30:L20:L10:CR0:HT0:NM0";
        assert_eq!(
            relative(a, c"hwloc:SK0:L30:L20:L10:CR1:HT2:NM0"),
            (0, 0x407c)
        );
        assert_eq!(relative(a, c"SK0"), (pmix_core::Status::ERR_BAD_PARAM.0, 0));
        // NULL arguments are refused before anything is read.
        let rc = PMIx_Get_relative_locality(a.as_ptr(), std::ptr::null(), std::ptr::null_mut());
        assert_eq!(rc, pmix_core::Status::ERR_BAD_PARAM.0);
    }
}
