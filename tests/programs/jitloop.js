// jitloop: a Node.js test program for the end-to-end tests. Usage:
// node --perf-basic-prof jitloop.js [SECONDS]. Runs JavaScript that V8
// compiles (its frames live in JIT code that /tmp/perf-PID.map names)
// for SECONDS of wall time (default 0.4), calling into V8's builtins and
// the C++ runtime. Prints nothing on stdout.
'use strict';

function leaf(n) {
	let s = 0;
	for (let i = 0; i < n; i++)
		s += Math.sqrt(i) * Math.sin(i);
	return s;
}

function middle(n) {
	const parts = [];
	for (let i = 0; i < 8; i++)
		parts.push({ v: leaf(n + i) });
	return parts.reduce((a, p) => a + p.v, 0);
}

const seconds = Number(process.argv[2] || 0.4);
const end = Date.now() + seconds * 1000;
let total = 0;
while (Date.now() < end)
	total += middle(2000);
if (Number.isNaN(total))
	process.exitCode = 1;
