/* One-line messages (see message.h). */
#include "base/message.h"

#include <stdio.h>
#include <string.h>

void ps_vformat(char *msg, size_t size, const char *prefix, const char *fmt, va_list ap)
{
	size_t used = 0;

	if (!msg || !size)
		return;
	msg[0] = '\0';
	if (prefix) {
		used = strlen(prefix);
		if (used >= size) {
			memcpy(msg, prefix, size - 1);
			msg[size - 1] = '\0';
			return;
		}
		memcpy(msg, prefix, used + 1);
	}
	vsnprintf(msg + used, size - used, fmt, ap);
}

int ps_vfail(char *msg, size_t size, int err, const char *prefix, const char *fmt, va_list ap)
{
	ps_vformat(msg, size, prefix, fmt, ap);
	return err;
}

int ps_fail(char *msg, size_t size, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ps_vformat(msg, size, NULL, fmt, ap);
	va_end(ap);
	return err;
}

void ps_vlog(ps_log_fn log, void *ctx, enum ps_log_level level, const char *prefix, const char *fmt,
             va_list ap)
{
	char msg[PS_MSG_MAX];

	if (!log)
		return;
	ps_vformat(msg, sizeof(msg), prefix, fmt, ap);
	log(ctx, level, msg);
}

void ps_log(ps_log_fn log, void *ctx, enum ps_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ps_vlog(log, ctx, level, NULL, fmt, ap);
	va_end(ap);
}
