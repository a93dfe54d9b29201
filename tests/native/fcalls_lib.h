/* The shared library of the function-timing helper. */
int lib_work(int x);
