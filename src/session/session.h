/* The session (ps_session_*, the public stack API of
 * include/pystitch/pystitch.h) as the other modules see it, beyond the
 * public API: what the archive writer (src/cli/cmd_archive.c) asks of it,
 * the symbol answers of a separate debug file it leaves out, which the
 * archive carries in its place. See docs/architecture.md for the header
 * rule. */
#ifndef PS_SESSION_SESSION_H
#define PS_SESSION_SESSION_H

#include "base/strbuf.h"
#include "pystitch/pystitch.h"

/* ps_session_open() for the archive writer: the session also keeps the
 * answers of separate debug files, for ps_session_recorded_names(). */
int ps_session_open_recording(const char *path, const struct ps_session_opts *opts,
                              struct ps_session **out);

/* The session must have been opened by ps_session_open_recording(), and
 * have read the capture. Appends the
 * answers the debug file at debug_path (as the observer was told it)
 * gave, as text, to out. Returns the number of objects they cover (0: the
 * file gave none) or -ENOMEM. See ps_symbols_recorded_names(). */
int ps_session_recorded_names(struct ps_session *s, const char *debug_path, struct ps_strbuf *out);

#endif /* PS_SESSION_SESSION_H */
