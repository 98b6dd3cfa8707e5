// A program that defines a function in the namespace CANARY_NAMESPACE (mlir or llvm): the
// symbol check must reject it, which shows that the check on dprun can fail.
namespace CANARY_NAMESPACE {
int canaryFunction(int x) { return x + 1; }
} // namespace CANARY_NAMESPACE

int main(int argc, char **) { return CANARY_NAMESPACE::canaryFunction(argc) == 0; }
