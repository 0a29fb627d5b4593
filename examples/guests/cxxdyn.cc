/* SPDX-License-Identifier: GPL-2.0-or-later */
// C++ with the runtime's dynamic parts: exceptions thrown through frames
// and caught by base class (the unwinder in libgcc_s, the personality in
// libstdc++), iostreams with floating-point formatting, std::string,
// std::vector and std::sort, a virtual call. Built dynamically.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

struct parse_error : std::runtime_error {
  int at;
  parse_error(const std::string &what, int at)
      : std::runtime_error(what), at(at) {}
};

struct Shape {
  virtual ~Shape() = default;
  virtual double area() const = 0;
};
struct Circle : Shape {
  double r;
  explicit Circle(double r) : r(r) {}
  double area() const override { return 3.14159265358979 * r * r; }
};

__attribute__((noinline)) static double parse(const std::string &s, int at) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::invalid_argument &) {
    throw parse_error("not a number: " + s, at);
  }
  if (used != s.size())
    throw parse_error("trailing text: " + s, at);
  return v;
}

int main(int argc, char **argv) {
  std::vector<double> v;
  int errors = 0;
  for (int i = 1; i < argc; i++) {
    try {
      v.push_back(parse(argv[i], i));
    } catch (const std::exception &e) {
      const parse_error *pe = dynamic_cast<const parse_error *>(&e);
      std::cout << "error at " << (pe ? pe->at : -1) << ": " << e.what()
                << "\n";
      errors++;
    }
  }
  std::sort(v.begin(), v.end());
  std::ostringstream os;
  os << std::fixed << std::setprecision(4);
  double sum = 0;
  for (double d : v) {
    Circle c(d);
    const Shape &s = c;
    os << d << ":" << s.area() << " ";
    sum += d;
  }
  std::cout << os.str() << "\n"
            << std::scientific << std::setprecision(6) << "sum " << sum
            << " mean " << (v.empty() ? 0.0 : sum / (double)v.size())
            << std::endl;
  try {
    std::vector<int> small(2);
    return small.at(7);
  } catch (const std::out_of_range &) {
    std::cout << "out_of_range caught" << std::endl;
  }
  return errors;
}
