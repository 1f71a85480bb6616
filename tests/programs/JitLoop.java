// JitLoop: a Java program for the end-to-end tests. Usage: java JitLoop
// [SECONDS]. Runs a method the JIT compiles (string formatting and
// hashing) for SECONDS of wall time (default 1), so that most samples land
// in JIT code, named from the perf map -XX:+DumpPerfMapAtExit writes.
public class JitLoop {
	static long work(int n) {
		long sum = 0;
		for (int i = 0; i < n; i++)
			sum += Integer.toString(i).hashCode();
		return sum;
	}

	public static void main(String[] args) {
		double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 1.0;
		long end = System.nanoTime() + (long) (seconds * 1e9);
		long total = 0;
		while (System.nanoTime() < end)
			total += work(20000);
		// the sum, so that the work is not optimised away; to stderr, as the
		// test programs print nothing on stdout
		System.err.println(total);
	}
}
