/* A process's maps: sorted, never overlapping, a new map cutting away
 * what it overlaps of older ones (perf's maps__fixup_overlappings), and
 * the MMAP records that make them, with perf's names for anonymous, JIT
 * and kernel module maps.
 */
#include "machine/machine_priv.h"

#include "base/array.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* First map whose end is above addr. */
static size_t lower_bound(const struct ps_process *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_maps;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct ps_map *ps_process_find_map(const struct ps_process *p, uint64_t addr)
{
	size_t i = lower_bound(p, addr);
	if (i < p->nr_maps && p->maps[i].start <= addr)
		return &p->maps[i];
	return NULL;
}

const struct ps_map *ps_process_next_map(const struct ps_process *p, const struct ps_map *map)
{
	size_t next = map ? (size_t)(map - p->maps) + 1 : 0;

	return next < p->nr_maps ? &p->maps[next] : NULL;
}

bool ps_process_map_current(const struct ps_process *process, const struct ps_map *map)
{
	return map->program == process->program;
}

const struct ps_map *ps_process_first_map_of(const struct ps_process *p,
                                             const struct ps_mapped_object *object)
{
	/* maps are sorted: the first found is the lowest */
	for (size_t i = 0; i < p->nr_maps; i++)
		if (p->maps[i].object == object)
			return &p->maps[i];
	return NULL;
}

int32_t ps_process_pid(const struct ps_process *p)
{
	return p->pid;
}

uint64_t ps_process_generation(const struct ps_process *p)
{
	return p->generation;
}

bool ps_process_unwind_ready(const struct ps_process *p)
{
	return p->unwind_ready;
}

void ps_process_set_unwind_ready(struct ps_process *p)
{
	p->unwind_ready = true;
}

const struct ps_mapped_object *ps_process_executable(const struct ps_process *p)
{
	return p->executable;
}

bool ps_process_mount_namespace(const struct ps_process *p, uint64_t *dev, uint64_t *ino)
{
	if (!p->has_mnt_ns)
		return false;
	*dev = p->mnt_ns_dev;
	*ino = p->mnt_ns_ino;
	return true;
}

void *ps_process_state(const struct ps_process *p, enum ps_process_slot slot)
{
	return p->slots[slot].state;
}

void ps_process_set_state(struct ps_process *p, enum ps_process_slot slot, void *state,
                          void (*free_state)(void *state))
{
	p->slots[slot].state = state;
	p->slots[slot].free_state = free_state;
}

static int reserve_maps(struct ps_process *p, size_t extra)
{
	if (extra > SIZE_MAX - p->nr_maps ||
	    !ps_array_reserve((void **)&p->maps, &p->cap_maps, p->nr_maps + extra, sizeof(*p->maps),
	                      32))
		return -ENOMEM;
	return 0;
}

/* Insert a map, cutting away what it overlaps of existing maps (perf's
 * maps__fixup_overlappings): an old map may lose its head, its tail, or be
 * split in two around the new one. */
static int insert_map(struct ps_process *p, const struct ps_map *map)
{
	size_t i, j;
	if (map->end <= map->start)
		return 0;
	if (reserve_maps(p, 2))
		return -ENOMEM;
	i = lower_bound(p, map->start);
	/* maps [i, j) overlap the new one */
	for (j = i; j < p->nr_maps && p->maps[j].start < map->end; j++)
		;
	struct ps_map before = { 0 }, after = { 0 };
	bool keep_before = false, keep_after = false;
	if (i < j && p->maps[i].start < map->start) {
		before = p->maps[i];
		before.end = map->start;
		keep_before = true;
	}
	if (i < j && p->maps[j - 1].end > map->end) {
		after = p->maps[j - 1];
		after.pgoff += map->end - after.start;
		after.start = map->end;
		keep_after = true;
	}
	size_t add = 1 + keep_before + keep_after;
	size_t removed = j - i;
	memmove(&p->maps[i + add], &p->maps[j], (p->nr_maps - j) * sizeof(*p->maps));
	p->nr_maps = p->nr_maps - removed + add;
	size_t k = i;
	if (keep_before)
		p->maps[k++] = before;
	p->maps[k++] = *map;
	if (keep_after)
		p->maps[k++] = after;
	p->generation++;
	return 0;
}

int ps_machine_clone_maps(struct ps_process *to, const struct ps_process *from)
{
	if (to == from)
		return 0;
	to->nr_maps = 0;
	if (reserve_maps(to, from->nr_maps))
		return -ENOMEM;
	if (from->nr_maps) /* (to->maps may be NULL then) */
		memcpy(to->maps, from->maps, from->nr_maps * sizeof(*from->maps));
	to->nr_maps = from->nr_maps;
	to->generation++;
	to->executable = from->executable;
	to->program = from->program;
	/* perf gives the child maps of its own, checked again map by map */
	to->unwind_ready = false;
	return 0;
}

static bool is_anon_memory(const char *name)
{
	return strcmp(name, "//anon") == 0 || strncmp(name, "/dev/zero", 9) == 0 ||
	       strncmp(name, "/anon_hugepage", 14) == 0;
}

static bool is_no_dso_memory(const char *name)
{
	return strncmp(name, "[stack", 6) == 0 || strncmp(name, "/SYSV", 5) == 0 ||
	       strcmp(name, "[heap]") == 0;
}

/* perf's __kmod_path__parse(): the DSO name of a module map. "[name]"
 * stays as it is; otherwise the file name, without ".ko" (and ".gz" or
 * ".xz" after it, the compressions Debian's perf reads) and in brackets
 * when it has that suffix, with every '-' turned into '_'. */
static char *kmod_name(const char *path)
{
	const char *name = strrchr(path, '/');
	const char *ext = strrchr(path, '.');
	bool kmod = false;
	char *out;

	name = name ? name + 1 : path;
	if (name[0] == '[' || !ext)
		return strdup(name);
	if (strcmp(ext, ".gz") == 0 || strcmp(ext, ".xz") == 0)
		ext -= 3;
	if (ext > name)
		kmod = strncmp(ext, ".ko", 3) == 0;
	if (kmod) {
		size_t len = (size_t)(ext - name);
		out = malloc(len + 3);
		if (!out)
			return NULL;
		out[0] = '[';
		memcpy(out + 1, name, len);
		out[len + 1] = ']';
		out[len + 2] = 0;
	} else {
		out = strdup(name);
		if (!out)
			return NULL;
	}
	for (char *c = out; *c; c++)
		if (*c == '-')
			*c = '_';
	return out;
}

/* machine__process_kernel_mmap_event(): a kernel-mode map is a module
 * when its name is a path, or in brackets but not the kernel's
 * ("[kernel.kallsyms]_text"). */
static bool kernel_module_map(const char *name)
{
	return name[0] == '/' || (name[0] == '[' && strncmp(name, "[kernel.kallsyms", 16) != 0);
}

int ps_machine_process_mmap(struct ps_machine *machine, const struct ps_event *ev)
{
	const struct ps_record_mmap *m = &ev->u.mmap;
	unsigned cpumode = ev->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	bool kernel = cpumode == PERF_RECORD_MISC_KERNEL;
	struct ps_process *p;
	struct ps_map map = { 0 };
	struct ps_object_key key = { 0 };

	if (kernel) {
		p = &machine->kernel;
	} else {
		/* into the address space the thread holds (perf's
		 * thread__insert_map()) */
		struct ps_thread *t = ps_machine_thread(machine, (int32_t)m->pid, (int32_t)m->tid);

		if (t)
			ps_machine_thread_lives(machine, t);
		p = t ? ps_machine_thread_process(machine, t) : NULL;
	}
	if (!p)
		return -ENOMEM;
	const char *name = m->filename ? m->filename : "";
	char perf_map[40];
	/* an MMAP (not MMAP2) has no prot: perf takes it for executable
	 * unless its data bit is set (machine__process_mmap_event) */
	uint32_t prot = ev->type == PERF_RECORD_MMAP2             ? m->prot
	                : (ev->misc & PERF_RECORD_MISC_MMAP_DATA) ? 0
	                                                          : PROT_EXEC;
	uint32_t flags = ev->type == PERF_RECORD_MMAP2 ? m->flags : 0;
	map.program = p->program;
	map.identity = !kernel &&
	               (is_anon_memory(name) || is_no_dso_memory(name) || (flags & MAP_HUGETLB));
	if ((prot & PROT_EXEC) && map.identity) {
		/* executable anonymous memory is JIT code: perf names it after
		 * the perf map the JIT writes for it */
		snprintf(perf_map, sizeof(perf_map), "/tmp/perf-%d.map", (int32_t)m->pid);
		name = perf_map;
	}
	key.build_id = m->has_build_id ? m->build_id : NULL;
	key.build_id_size = m->has_build_id ? m->build_id_size : 0;
	/* a file's device and inode (an MMAP2 without build-id carries
	 * them; anonymous and special mappings have none) */
	key.has_file_id = ev->type == PERF_RECORD_MMAP2 && !m->has_build_id && !map.identity &&
	                  (m->ino || m->maj || m->min);
	key.maj = m->maj;
	key.min = m->min;
	key.ino = m->ino;
	map.object = ps_machine_object(machine, name, &key);
	if (!map.object)
		return -ENOMEM;
	if (!map.object->mapper_pid && !kernel) {
		map.object->mapper_pid = (int32_t)m->pid;
		map.object->has_mnt_ns = p->has_mnt_ns;
		map.object->mnt_ns_dev = p->mnt_ns_dev;
		map.object->mnt_ns_ino = p->mnt_ns_ino;
	}
	if (kernel) {
		map.object->kernel = true;
		if (!map.object->module_name && kernel_module_map(name)) {
			map.object->module_name = kmod_name(name);
			if (!map.object->module_name)
				return -ENOMEM;
			map.object->module_start = m->start;
		}
	}
	if (name == perf_map)
		map.object->jit_pid = (int32_t)m->pid;
	map.start = m->start;
	map.end = m->start + m->len;
	if (map.end < map.start)
		map.end = UINT64_MAX;
	map.pgoff = m->pgoff;
	/* the kernel maps the program before its interpreter and libraries
	 * at exec, and perf synthesizes a running process's maps in address
	 * order, the program's first */
	if (!kernel && !p->executable && (prot & PROT_EXEC) && !map.identity && name[0] == '/')
		p->executable = map.object;
	if (ev->type == PERF_RECORD_MMAP2) {
		map.prot = m->prot;
		map.flags = m->flags;
	} else {
		/* MMAP has no prot: its data bit says whether it is executable */
		map.prot = (ev->misc & PERF_RECORD_MISC_MMAP_DATA) ? 3 : 5;
	}
	return insert_map(p, &map);
}
