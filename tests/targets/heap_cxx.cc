// Heap test target for C++: operator new from libstdc++ (no frame pointers
// there), attributed to the user's lines.
//
//   heap_cxx [HOLD_MS]
//
// Keeps 4 MiB through std::vector growth (HEAP_VECTOR), 640 KiB in 10240
// nodes of 64 bytes from new (HEAP_NEW), 1 MiB from new[] (HEAP_NEW_ARRAY),
// holds HOLD_MS and exits without freeing.
#include <cstdlib>
#include <unistd.h>
#include <vector>

struct node {
	node *next;
	char pad[56];
};

std::vector<int> *keep;
node *list;
char *array;

__attribute__((noinline)) void grow()
{
	keep = new std::vector<int>();
	for (int i = 0; i < (1 << 20); i++)
		keep->push_back(i); // HEAP_VECTOR: 4 MiB
}

__attribute__((noinline)) void nodes()
{
	for (int i = 0; i < 10240; i++) {
		node *n = new node(); // HEAP_NEW: 10240 * 64 bytes
		n->next = list;
		list = n;
	}
}

__attribute__((noinline)) void arrays()
{
	array = new char[1 << 20]; // HEAP_NEW_ARRAY: 1 MiB
	array[0] = 1;
}

int main(int argc, char **argv)
{
	grow();
	nodes();
	arrays();
	usleep((argc > 1 ? atoi(argv[1]) : 300) * 1000);
	_exit(0);
}
