// C++ for the DIE walker's test (test_die_walk.c): code that lies inside
// classes in the DWARF. A lambda's operator() is a member of its closure
// class inside the function, a local class's member function inside the
// function too, and a member function defined in its class.
struct counter {
	int step;
	int next(int at) const { return at + step; }
};

extern "C" int cxx_fixture_run(int n)
{
	struct local {
		int base;
		int twice() const { return base * 2; }
	};
	auto add = [n](int x) { return x + n; };
	auto nested = [&add](int x) {
		auto inner = [x](int y) { return x * y; };
		return inner(add(x));
	};
	counter c{ 3 };
	local l{ n };
	int sum = 0;

	for (int i = 0; i < n; i++)
		sum += nested(c.next(i)) + l.twice();
	return sum;
}
