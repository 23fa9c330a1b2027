// The reference for `cxforge bench solver --side-by-side --reference PROGRAM`: Pascal Pons' C++ solver
// (github.com/PascalPons/connect4, not shipped here) behind the reference protocol: one move string per line
// in (Pons' digits 1-7), one "score nodes seconds" line out, the table cleared before each position and only
// the solve timed, as the bench times our engines.  Build it against a checkout of his repository:
//   g++ -O3 -march=native -std=c++11 -I PONS_DIR -o pons tools/bench/pons_harness.cpp PONS_DIR/Solver.cpp
#include "Solver.hpp"
#include <chrono>
#include <iostream>
#include <string>
using namespace GameSolver::Connect4;

int main(int argc, char **argv) {
  Solver solver;
  bool weak = argc > 1 && std::string(argv[1]) == "-w";
  std::string line;
  while (std::getline(std::cin, line)) {
    Position P;
    if (P.play(line) != line.size()) {
      std::cerr << "invalid move string: " << line << std::endl;
      return 1;
    }
    solver.reset();
    auto t0 = std::chrono::steady_clock::now();
    int score = solver.solve(P, weak);
    auto t1 = std::chrono::steady_clock::now();
    std::cout << score << " " << solver.getNodeCount() << " " << std::chrono::duration<double>(t1 - t0).count()
              << std::endl;
  }
}
