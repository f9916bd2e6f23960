// Runs a fuzz target's LLVMFuzzerTestOneInput on given inputs without libFuzzer: each argument is
// a file, or a folder whose regular files are read in name order. The test suite links every
// target with this driver and replays its seeds, so a target that no longer builds, or a seed
// that breaks a property (the check traps), fails the ordinary build and tests. Prints how many
// inputs ran; exits 2 when an argument cannot be read or no input was found.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool
read_file(const std::filesystem::path& path, std::string& out)
{
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return false;
  }
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

} // namespace

int
main(int argc, char** argv)
{
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    std::error_code error;
    if (std::filesystem::is_directory(arg, error)) {
      std::vector<std::filesystem::path> files;
      for (const auto& entry : std::filesystem::directory_iterator(arg, error)) {
        if (entry.is_regular_file()) {
          files.push_back(entry.path());
        }
      }
      if (error) {
        std::fprintf(stderr, "replay: %s: %s\n", argv[i], error.message().c_str());
        return 2;
      }
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else {
      inputs.push_back(arg);
    }
  }
  std::string bytes;
  for (const auto& path : inputs) {
    if (!read_file(path, bytes)) {
      std::fprintf(stderr, "replay: %s: cannot read\n", path.c_str());
      return 2;
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::fprintf(stderr, "replay: %zu inputs\n", inputs.size());
  return inputs.empty() ? 2 : 0;
}
