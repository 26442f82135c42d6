// The TOML form of a workload read one [[segment]] at a time (issue 25): the file's text is cut
// at its top-level [[segment]] headers and each piece parsed on its own, so memory does not
// grow with the number of segments (a whole 10^6-segment file as one TOML tree took 1.2 GB).
//
// Only valid files are streamed. Anything the cutter does not expect (a table other than a
// segment's, no [[segment]], a piece that does not parse or check, totals over 64 bits) throws
// NeedWholeFile; the caller then reads the file whole (workload_from_table), which gives the
// error with its exact file:line:column, or, should the cutter have been wrong about a valid
// file, the same segments in the same order.
#pragma once

#include "input_file.hpp"

#include <pmc/workload.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc::detail {

struct NeedWholeFile {};

// A [[segment]] as the quick path (workload_toml_fast.cpp) read it: the segment as written (its
// cycles not yet multiplied by the repeat), its signals, its repeat.
struct FastSegment {
  Segment segment;
  std::vector<SignalCount> signals;
  std::uint64_t repeat = 1;
  // The signal names met so far and their ids, so that a name is interned once, not per segment.
  std::vector<std::pair<std::string, Signal>> names;
};
// The piece (a [[segment]] header line and the lines up to the next) read without toml++, or
// false when it is not in the plain shape that path takes (the caller then parses it in full).
bool fast_segment(std::string_view piece, FastSegment& out);

class TomlSegmentStream {
 public:
  // Reads the lines before the first [[segment]] (name, description) from `in`, the file
  // opened and checked (base/input_file.hpp), which it takes over. nullptr when the file is not
  // one this can stream (read it whole instead).
  static std::unique_ptr<TomlSegmentStream> open(const std::filesystem::path& file, InputFile& in);
  ~TomlSegmentStream();
  TomlSegmentStream(const TomlSegmentStream&) = delete;
  TomlSegmentStream& operator=(const TomlSegmentStream&) = delete;

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::string& description() const { return description_; }
  // The next segment (valid until the next call), nullptr after the last; NeedWholeFile as above.
  const Segment* next();
  void rewind();
  [[nodiscard]] std::size_t line() const { return segment_line_; }  // of the last segment's header
  [[nodiscard]] long offset() const { return base_ + static_cast<long>(pos_); }  // bytes read so far

 private:
  TomlSegmentStream() = default;
  bool read_line();             // into line_; false at the end of the file
  bool read_preamble(std::string& preamble);
  bool next_piece();            // the next [[segment]]'s text into piece_
  void scan(std::string_view text);  // follows strings and brackets over a line that is not a header
  enum class Header { none, segment, segment_part, other };
  [[nodiscard]] Header header_kind() const;
  void add_totals(const Segment& s, std::uint64_t times);

  std::filesystem::path file_;
  std::FILE* f_ = nullptr;
  // Read in blocks: bytes [pos_, end_) of buf_ are the file's from offset base_ + pos_ on.
  // A line longer than the buffer, or a piece over kMaxPiece, is not streamed.
  static constexpr std::size_t kBuffer = 256u << 10;
  static constexpr std::size_t kMaxPiece = 16u << 20;
  std::unique_ptr<char[]> buf_;
  std::size_t pos_ = 0, end_ = 0;
  long base_ = 0;
  bool eof_ = false;
  std::string_view line_;        // in buf_, valid until the next read_line()
  bool have_line_ = false;       // line_ holds the next piece's header, already read
  std::size_t line_no_ = 0;      // of line_
  long first_offset_ = 0;        // the file offset after the first [[segment]] header line
  std::size_t first_line_ = 0;   // its line number
  std::string name_, description_;
  // The lexical state at the end of the lines read so far.
  enum class InString { none, basic, literal } ml_ = InString::none;  // a multi-line string
  int depth_ = 0;                // open [ and { of values
  // The piece being handed out.
  std::string piece_;
  std::size_t piece_line_ = 0;
  std::size_t segment_line_ = 0;
  Workload chunk_;               // the piece through toml++
  std::size_t chunk_next_ = 0;
  FastSegment fast_;             // the piece through the quick path
  std::uint64_t repeat_left_ = 0;  // more copies of current_ to give (a repeat with a PC range)
  Segment current_;
  // Totals so far, which must fit 64 bits.
  std::uint64_t total_cycles_ = 0;
  std::vector<std::pair<Signal, std::uint64_t>> totals_;
};

}  // namespace pmc::detail
