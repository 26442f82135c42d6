# One bug in the example's device model (examples/backend-skeleton/model.cpp): it ignores the
# USR and OS bits, so every mode counts. pmc-conformance must fail
# user_and_kernel_filters_count_apart.
set(PATCH_FILE model.cpp)
set(PATCH_OLD [=[      if (!(sel & (s.mode == pmc::Mode::user ? kUsr : kOs))) continue;
]=])
set(PATCH_NEW [=[      // BROKEN (tests/conformance/broken_filter): USR and OS are ignored, every mode counts.
]=])
