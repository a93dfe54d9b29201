#include "fcalls_lib.h"

__attribute__((noinline)) int lib_work(int x) {
    int y = x;
    for (int i = 0; i < 16; i++) y = y * 31 + i;
    return y;
}
