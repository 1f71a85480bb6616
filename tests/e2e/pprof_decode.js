// pprof_decode.js: reads a gzipped pprof profile with the npm package
// pprof-format (an encoder and decoder written apart from pystitch), checks
// that every id it refers to exists, and prints it for pprof.sh.
//
// usage: node pprof_decode.js PACKAGE_DIR PROFILE [json|fold-samples|fold-period|python]
//   PACKAGE_DIR  the --prefix pprof-format was installed under
//   json         (default) a header object on the first line, then one
//                object per sample: its stack of function names root
//                first, its values and its labels
//   fold-*       folded stacks as `pystitch collapse --per tid --weight
//                samples|period` prints them (unsorted; equal stacks summed)
//   python       per sample, its frames without a mapping (Python frames)
//                root first as `py::NAME:FILE` from the functions' name and
//                file name, joined by ';'
// Exit status 1 with a message on stderr when the profile is inconsistent.
'use strict';

const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

const [packageDir, profilePath, mode = 'json'] = process.argv.slice(2);
if (!packageDir || !profilePath) {
	process.stderr.write('usage: node pprof_decode.js PACKAGE_DIR PROFILE [json|fold-samples|fold-period|python]\n');
	process.exit(2);
}
const { Profile } = require(path.join(packageDir, 'node_modules', 'pprof-format'));

function fail(message) {
	process.stderr.write(`pprof_decode: ${profilePath}: ${message}\n`);
	process.exit(1);
}

const profile = Profile.decode(zlib.gunzipSync(fs.readFileSync(profilePath)));
const strings = profile.stringTable.strings;

function str(index, what) {
	const i = Number(index);
	if (!Number.isInteger(i) || i < 0 || i >= strings.length)
		fail(`${what}: string index ${index} outside the table of ${strings.length}`);
	return strings[i];
}

if (strings.length === 0 || strings[0] !== '')
	fail('string_table[0] is not the empty string');

// every table by id; ids are non-zero and unique
function byId(items, what) {
	const table = new Map();
	for (const item of items) {
		const id = Number(item.id);
		if (id === 0)
			fail(`${what} with id 0`);
		if (table.has(id))
			fail(`two ${what}s with id ${id}`);
		table.set(id, item);
	}
	return table;
}
const mappings = byId(profile.mapping, 'mapping');
const functions = byId(profile.function, 'function');
const locations = byId(profile.location, 'location');

// a mapping no location refers to (the main binary put first when no
// frame fell in it) has no addresses; every other has some
const used = new Set(profile.location.map((l) => Number(l.mappingId)));
for (const m of mappings.values()) {
	str(m.filename, `mapping ${m.id} filename`);
	str(m.buildId, `mapping ${m.id} build_id`);
	if (!used.has(Number(m.id))) {
		if (BigInt(m.memoryLimit) !== 0n || BigInt(m.memoryStart) !== 0n)
			fail(`mapping ${m.id}: a range without locations`);
	} else if (BigInt(m.memoryLimit) <= BigInt(m.memoryStart)) {
		fail(`mapping ${m.id}: empty range`);
	}
}
for (const f of functions.values()) {
	str(f.name, `function ${f.id} name`);
	str(f.systemName, `function ${f.id} system_name`);
	str(f.filename, `function ${f.id} filename`);
}
for (const l of locations.values()) {
	const mappingId = Number(l.mappingId);
	if (mappingId !== 0) {
		const m = mappings.get(mappingId);
		if (!m)
			fail(`location ${l.id}: no mapping ${mappingId}`);
		const address = BigInt(l.address);
		if (address < BigInt(m.memoryStart) || address >= BigInt(m.memoryLimit))
			fail(`location ${l.id}: address ${address} outside mapping ${mappingId}`);
	}
	for (const line of l.line)
		if (!functions.has(Number(line.functionId)))
			fail(`location ${l.id}: no function ${line.functionId}`);
}
const sampleTypes = profile.sampleType.map((t) => [str(t.type, 'sample type'), str(t.unit, 'unit')]);

// The frames of a sample, root first: locations come leaf first, and a
// location's lines innermost first.
function frames(sample) {
	const out = [];
	for (let i = sample.locationId.length - 1; i >= 0; i--) {
		const l = locations.get(Number(sample.locationId[i]));
		if (!l)
			fail(`a sample refers to location ${sample.locationId[i]}, which is missing`);
		if (l.line.length === 0) {
			out.push({ name: '[unknown]', system: '[unknown]', file: '', address: String(l.address) });
			continue;
		}
		for (let j = l.line.length - 1; j >= 0; j--) {
			const f = functions.get(Number(l.line[j].functionId));
			out.push({
				name: str(f.name, 'name'),
				system: str(f.systemName, 'system name'),
				file: str(f.filename, 'file name'),
				mapping: Number(l.mappingId),
			});
		}
	}
	return out;
}

function labels(sample) {
	const out = {};
	for (const label of sample.label) {
		const key = str(label.key, 'label key');
		out[key] = Number(label.str) ? str(label.str, 'label value') : Number(label.num);
	}
	return out;
}

if (mode === 'json') {
	const periodType = profile.periodType
		? [str(profile.periodType.type, 'period type'), str(profile.periodType.unit, 'period unit')]
		: null;
	process.stdout.write(JSON.stringify({
		sampleTypes,
		periodType,
		period: Number(profile.period),
		timeNanos: String(profile.timeNanos),
		durationNanos: String(profile.durationNanos),
		defaultSampleType: str(profile.defaultSampleType, 'default sample type'),
		samples: profile.sample.length,
		locations: locations.size,
		functions: functions.size,
		mappings: [...mappings.values()].map((m) => ({
			filename: str(m.filename, 'filename'),
			buildId: str(m.buildId, 'build id'),
		})),
	}) + '\n');
	for (const sample of profile.sample)
		process.stdout.write(JSON.stringify({
			stack: frames(sample),
			values: sample.value.map(Number),
			labels: labels(sample),
		}) + '\n');
} else if (mode === 'fold-samples' || mode === 'fold-period') {
	const column = mode === 'fold-samples' ? 0 : 1;
	const folded = new Map();
	for (const sample of profile.sample) {
		const l = labels(sample);
		const head = `${String(l.comm).replace(/ /g, '_').replace(/;/g, ':')}-${l.pid}/${l.tid}`;
		const names = frames(sample).map((f) => f.system.replace(/;/g, ':'));
		const key = [head, ...names].join(';');
		folded.set(key, (folded.get(key) || 0n) + BigInt(sample.value[column]));
	}
	for (const [key, weight] of folded)
		process.stdout.write(`${key} ${weight}\n`);
} else if (mode === 'python') {
	for (const sample of profile.sample) {
		const python = frames(sample).filter((f) => f.mapping === 0 && f.name !== '[truncated]');
		process.stdout.write(python.map((f) => `py::${f.name}:${f.file}`).join(';') + '\n');
	}
} else {
	fail(`unknown mode ${mode}`);
}
