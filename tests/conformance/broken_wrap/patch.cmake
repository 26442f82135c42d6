# One bug in the example's device model (examples/backend-skeleton/model.cpp): a counter
# accumulates past 2^32 instead of wrapping. A session masks and folds what it reads, so its
# counts stay right; the counter register does not. pmc-conformance must fail
# the_model_wraps_each_counter_several_times.
set(PATCH_FILE model.cpp)
set(PATCH_OLD [=[      bool asserted = false;  // no edge detection on this PMU
      const pmc::counting::Advance a =
          pmc::counting::advance(ctr_[i], kWidth, s.cycles, k, pmc::counting::Filter{}, asserted);
]=])
set(PATCH_NEW [=[      // BROKEN (tests/conformance/broken_wrap): the counter accumulates instead of wrapping.
      const pmc::counting::Advance a{ctr_[i] + s.cycles * k, 0};
]=])
