# The libFuzzer targets, one source each (tests/fuzz/<target>.cpp): built with libFuzzer by
# tests/fuzz/CMakeLists.txt (QCHECK_FUZZ), and by tests/CMakeLists.txt with replay.cpp, which runs
# their seeds as ordinary tests; scripts/fuzz.sh runs every target of this list by default.
set(QCHECK_FUZZ_TARGETS fuzz_safetensors fuzz_index_json fuzz_config fuzz_regex fuzz_json_patch
    fuzz_entry_index fuzz_compiled_list fuzz_dynamic_rules)
