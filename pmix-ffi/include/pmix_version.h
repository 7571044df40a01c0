/*
 * pmix-rs: the PMIx API level this header set declares.
 *
 * The types and constants of this header set follow the ABI of OpenPMIx 4.2.2 (see
 * pmix_common.h), so code that tests these numbers to decide which calls exist sees the
 * level whose layouts it gets. Calls newer than 4.2.2 that pmix-rs offers
 * (PMIx_Device_distance_create/free/construct/destruct, PMIx_Progress_thread_stop) are
 * announced by PMIX_RS_VERSION, defined in pmix_common.h.
 */
#ifndef PMIX_RS_PMIX_VERSION_H
#define PMIX_RS_PMIX_VERSION_H

#define PMIX_VERSION_MAJOR 4L
#define PMIX_VERSION_MINOR 2L
#define PMIX_VERSION_RELEASE 2L

#define PMIX_NUMERIC_VERSION 0x00040202

#endif /* PMIX_RS_PMIX_VERSION_H */
