// C++ helper: a namespaced method with a mangled name, called a known number of times.
#include <cstdio>
#include <cstdlib>

namespace geometry {
class Shape {
  public:
    explicit Shape(int s) : side(s) {}
    __attribute__((noinline)) long area(int scale) const;

  private:
    int side;
};

long Shape::area(int scale) const {
    long a = (long)side * side * scale;
    __asm__ volatile("" : "+r"(a));
    return a;
}
} // namespace geometry

int main(int argc, char **argv) {
    long n = argc > 1 ? std::atol(argv[1]) : 100;
    geometry::Shape s(3);
    long total = 0;
    for (long i = 0; i < n; i++) total += s.area((int)(i % 5));
    std::printf("calls %ld\ntotal %ld\n", n, total);
    return 0;
}
