#include "runner/cli/cli.hpp"

int main(int argc, char** argv) { return streamlab::run_cli(argc, argv); }
