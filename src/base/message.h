/* One-line messages: the one way every module writes an error message
 * into its buffer (ps_fail) or a line through a log callback (ps_log),
 * and the one size of a message buffer. A module's own helper, when it has
 * one, only says where the message goes and what it starts with. */
#ifndef PS_BASE_MESSAGE_H
#define PS_BASE_MESSAGE_H

#include <stdarg.h>
#include <stddef.h>

#include "pystitch/pystitch.h"

/* Bytes of every message buffer, the NUL included: room for a full path
 * and what is said about it. Longer messages are cut. */
#define PS_MSG_MAX 4096

/* Write prefix (NULL: none) and then fmt's text into msg, of size bytes,
 * cut to fit; nothing when msg is NULL or size 0. */
void ps_vformat(char *msg, size_t size, const char *prefix, const char *fmt, va_list ap);

/* The error path's one call: the message into msg (as ps_vformat), and
 * err back, so that `return ps_fail(msg, size, -EINVAL, ...);` fails. */
int ps_fail(char *msg, size_t size, int err, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
int ps_vfail(char *msg, size_t size, int err, const char *prefix, const char *fmt, va_list ap);

/* A line through log (nothing when it is NULL): prefix, then fmt's text. */
void ps_log(ps_log_fn log, void *ctx, enum ps_log_level level, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
void ps_vlog(ps_log_fn log, void *ctx, enum ps_log_level level, const char *prefix, const char *fmt,
             va_list ap);

#endif /* PS_BASE_MESSAGE_H */
