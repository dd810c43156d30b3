/* Calls the library's hot function for argv[1] CPU seconds (default 1). */
#include <stdlib.h>

void split_spin(double secs);

int main(int argc, char **argv)
{
	split_spin(argc > 1 ? atof(argv[1]) : 1);
	return 0;
}
