// Visual C++ seems to prefer a ".cpp" extension to ".cc" one.
#include "gc_cpp.cc"
