/*
 * pmix_ft.h: rank-state tracking across processes (pmix-rs's own API, not part of
 * the PMIx standard or of OpenPMIx).
 *
 * The 2011 local/global-view design (validate_local, validate_global, get_state,
 * get_num_state, OR-able states and modifiers) and the ULFM operations (get_failed,
 * ack, agree, shrink, revoke) over one detection log per group. Every name starts
 * with pmixrs_ft_ or PMIXRS_FT_, which no OpenPMIx name does.
 *
 * A group is named by a string: this job's namespace (its ranks are the group's
 * ranks), or a PMIx group this process is a member of (its members ordered by
 * namespace, then rank). A group's tracker is made on the first call naming it.
 * Failures come from the events the PMIx server sends (a process that aborted or
 * was lost, a group member that failed; a member that left is not a failure).
 * Only the server's are believed: a failure event or a PMIX_GROUP_LEFT counts
 * when its source is in the server's namespace (the server itself, or its host's
 * daemons on other nodes) or is the process it names (Open MPI's daemons relay a
 * rank's abort in that rank's name: a process can declare only itself failed), a
 * revocation also when its source is a member of the group. The same event
 * notified by a client or a tool still reaches every event handler, with its
 * real source (the server stamps it), and changes no state here.
 *
 * Local calls (no message; allowed in an event handler or a callback; never
 * PMIX_ERR_WOULD_BLOCK; an accessor repeated without a validate in between gives
 * the same answer): validate_local, get_state_*, get_num_state_*, get_failed,
 * ack_failed, get_acked, is_revoked, group_size, revoke (which sends an event).
 * Collective calls (every live member calls them, in the same order; they return
 * PMIX_ERR_WOULD_BLOCK at once when called on the progress thread, and nobody
 * waits on a member that is dead): validate_global, validate_global_count, agree,
 * shrink.
 *
 * Every call returns PMIX_ERR_INIT before PMIx_Init or after PMIx_Finalize;
 * PMIX_ERR_BAD_PARAM for a NULL, empty or over-long (> 255 bytes) group name, a
 * NULL output pointer, or a type with bits outside the five below;
 * PMIX_ERR_NOT_FOUND for a group this process is in no record of;
 * PMIX_ERR_NOT_A_MEMBER when it is not among the group's members, or no longer
 * (it left the PMIx group, or the group was destructed): from then on every call
 * on that group answers PMIX_ERR_NOT_A_MEMBER, collective ones included.
 */

#ifndef PMIXRS_FT_H
#define PMIXRS_FT_H

#include <stdint.h>
#include <stddef.h>
#include <pmix_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* States (OR-able into a type) ... */
#define PMIXRS_FT_STATE_OK      0x01 /* not failed */
#define PMIXRS_FT_STATE_FAILED  0x02 /* failed, not recognized (not in the global view) */
#define PMIXRS_FT_STATE_NULL    0x04 /* failed, recognized (in the global view) */
/* ... and modifiers. No modifier bit: either; no state bit: any failed state. */
#define PMIXRS_FT_MOD_NEW       0x08 /* added to the view by its latest update */
#define PMIXRS_FT_MOD_OLD       0x10 /* in the view before its latest update */

/* get_state with a non-zero incount below the answer's size (the 2011 thread's
 * MPI_ERR_SIZE); *outcount then holds the size, nothing is written. */
#define PMIXRS_FT_ERR_SIZE      (-3001)
/* The event pmixrs_ft_revoke sends to the group's members ("pmix.grp.id" names
 * the group). */
#define PMIXRS_FT_EVENT_REVOKED (-3002)
/* An agreement's uniform error (ULFM's MPI_ERR_PROC_FAILED): a member failed
 * before contributing and not every contributor had acknowledged it. */
#define PMIXRS_FT_ERR_PROC_FAILED PMIX_ERR_PROC_TERM_WO_SYNC

/* One member in an answer: its group rank and its state with one modifier. */
typedef struct pmixrs_ft_rank_info {
    pmix_rank_t rank;
    int state;
} pmixrs_ft_rank_info_t;

/* Local. L := every failure known here. num_failed = |L|, new_failures = how many
 * this call added; either pointer may be NULL. */
pmix_status_t pmixrs_ft_validate_local(const char *group, int *num_failed,
                                       int *new_failures);

/* Collective. G := the agreed failed set (every contributor's known failures and
 * every member that did not contribute), then L := G. num_failed = |G|,
 * new_failures = how many G gained; either pointer may be NULL. Returns
 * PMIX_ERR_UNREACH when not connected to a server, or the server's status. */
pmix_status_t pmixrs_ft_validate_global(const char *group, int *num_failed,
                                        int *new_failures);

/* Collective: validate_global, then *count = the number of members of G that
 * count_type matches (the variant the 2011 thread ends on). */
pmix_status_t pmixrs_ft_validate_global_count(const char *group, int count_type,
                                              int *count);

/* Local. The members of L (get_state_local) or G (get_state_global) that type
 * matches, ascending by rank. incount == 0: *outcount = their number, rank_infos
 * ignored (may be NULL). Else if incount < their number: PMIXRS_FT_ERR_SIZE,
 * *outcount = their number, nothing written. Else *outcount entries written. */
pmix_status_t pmixrs_ft_get_state_local(const char *group, int type, int incount,
                                        int *outcount,
                                        pmixrs_ft_rank_info_t rank_infos[]);
pmix_status_t pmixrs_ft_get_state_global(const char *group, int type, int incount,
                                         int *outcount,
                                         pmixrs_ft_rank_info_t rank_infos[]);

/* Local, O(1): how many members of L / G type matches. */
pmix_status_t pmixrs_ft_get_num_state_local(const char *group, int type, int *count);
pmix_status_t pmixrs_ft_get_num_state_global(const char *group, int type, int *count);

/* Local. The group's size and this process's rank in it (neither pointer may be
 * NULL). */
pmix_status_t pmixrs_ft_group_size(const char *group, int *size, int *rank);

/* Local (ULFM get_failed). Every failure known here, in detection order (each
 * answer a prefix of later ones), into ranks[0..incount); *outcount = how many
 * there are (at most incount written; ranks may be NULL when incount is 0). */
pmix_status_t pmixrs_ft_get_failed(const char *group, pmix_rank_t ranks[],
                                   size_t incount, size_t *outcount);

/* Local (ULFM ack_failed). Acknowledges the first n failures of get_failed (all
 * when fewer); the watermark never moves back. *acked = how many are
 * acknowledged (may be NULL). */
pmix_status_t pmixrs_ft_ack_failed(const char *group, size_t n, size_t *acked);

/* Local (ULFM get_acked). The acknowledged failures, as get_failed. */
pmix_status_t pmixrs_ft_get_acked(const char *group, pmix_rank_t ranks[],
                                  size_t incount, size_t *outcount);

/* Collective (ULFM agree). *flag in: this member's flag; out: the AND of every
 * contributor's, the same at every survivor. Returns PMIX_SUCCESS, or
 * PMIXRS_FT_ERR_PROC_FAILED (the same at every survivor, *flag still set). */
pmix_status_t pmixrs_ft_agree(const char *group, uint32_t *flag);

/* Collective (ULFM shrink). Agrees on the failed set, then constructs the PMIx
 * group new_group of the survivors in old rank order. *new_rank / *new_size
 * (either may be NULL): this process's rank in it and its size. Returns the
 * construct's status too. */
pmix_status_t pmixrs_ft_shrink(const char *group, const char *new_group,
                               int *new_rank, int *new_size);

/* Local (ULFM revoke): marks the group revoked here and sends
 * PMIXRS_FT_EVENT_REVOKED to its members, which mark it too. */
pmix_status_t pmixrs_ft_revoke(const char *group);

/* Local: *revoked = 1 if the group was revoked (here or by a member), else 0. */
pmix_status_t pmixrs_ft_is_revoked(const char *group, int *revoked);

#ifdef __cplusplus
}
#endif

#endif /* PMIXRS_FT_H */
