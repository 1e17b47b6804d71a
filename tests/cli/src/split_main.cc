// Two translation units built with -gsplit-dwarf: each unit's functions,
// inlined frames included, are in a .dwo file of its own, and the binary
// keeps only skeleton units with the line table.  tests/cli/test_dwarf_forms.sh
// and tests/cli/test_sym_oracle.sh build it so.
#include <map>
#include <string>
#include <vector>

std::vector<int> *grow(int n);

static std::map<std::string, std::vector<int> *> table;

static inline void keep(const std::string &name, int n)
{
	table[name] = grow(n);
}

int main()
{
	for (int i = 0; i < 300; i++)
		keep(std::to_string(i % 97), i);
	for (auto &e : table)
		delete e.second;
	return 0;
}
