// pmc profile --flamegraph: the stacks as a self-contained SVG flame graph. Each frame is a box
// as wide as its share of the samples, its callees stacked above it, the root ("all") at the
// bottom; siblings in name order, so that the picture does not depend on the sampling's order.
// A box's <title> is its tooltip (the function, its samples and share); a small script fits
// the names into the boxes, shows the frame under the pointer below the graph, and zooms on a
// click (the clicked frame fills the width, its callers stay below it; Escape or "Reset zoom"
// goes back).
#include "profile_report.hpp"

#include <algorithm>
#include <map>
#include <memory>

namespace pmc_cli {

namespace {

constexpr double kWidth = 1200;     // px, the graph's
constexpr double kFrameHeight = 17;  // px
constexpr double kTop = 48;         // title and the zoom control
constexpr double kBottom = 32;      // the line naming the frame under the pointer
constexpr double kCharWidth = 6.6;  // px per character of the 11 px monospace labels, for the first fit

struct Node {
  std::uint64_t samples = 0;
  bool kernel = false;
  std::map<std::string, std::unique_ptr<Node>> children;  // by label: name order
};

std::string xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t') out += c;  // no control characters in XML
    }
  }
  return out;
}

// A warm colour from the name (the same function has the same colour in every graph); kernel
// frames in cooler tones.
std::string colour(const std::string& label, bool kernel) {
  std::uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char c : label) h = (h ^ c) * 16777619u;
  const unsigned hue = kernel ? 190 + h % 40 : h % 50;
  const unsigned light = 52 + (h >> 8) % 14;
  return fmt::format("hsl({},{}%,{}%)", hue, kernel ? 45 : 85, light);
}

// The label cut to fit `width` px ("" when not even two characters fit).
std::string fit(const std::string& label, double width) {
  const auto chars = static_cast<std::size_t>(std::max(0.0, (width - 6) / kCharWidth));
  if (chars < 3) return {};
  if (label.size() <= chars) return label;
  return label.substr(0, chars - 2) + "..";
}

struct Writer {
  std::string out;
  std::uint64_t total = 0;
  double height = 0;
  std::size_t frames = 0;

  void frame(const std::string& label, const Node& n, double x, std::size_t depth) {
    const double w = kWidth * static_cast<double>(n.samples) / static_cast<double>(total);
    if (w < 0.1) return;  // narrower than a tenth of a pixel: left out (with its callees)
    const double y = height - kBottom - static_cast<double>(depth + 1) * kFrameHeight;
    const double share = 100.0 * static_cast<double>(n.samples) / static_cast<double>(total);
    const std::string name = xml(label);
    ++frames;
    out += fmt::format(
        "<g class=\"f\" data-x=\"{:.6f}\" data-w=\"{:.6f}\" data-d=\"{}\" data-n=\"{}\">"
        "<title>{} ({} samples, {:.2f}%)</title>"
        "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" rx=\"2\" fill=\"{}\"/>"
        "<text x=\"{:.2f}\" y=\"{:.1f}\">{}</text></g>\n",
        x / kWidth, w / kWidth, depth, name, name, group_digits(n.samples), share, x, y, w, kFrameHeight - 1,
        colour(label, n.kernel), x + 3, y + kFrameHeight - 5, xml(fit(label, w)));
    double child_x = x;
    for (const auto& [child_label, child] : n.children) {
      frame(child_label, *child, child_x, depth + 1);
      child_x += kWidth * static_cast<double>(child->samples) / static_cast<double>(total);
    }
  }
};

std::size_t depth_of(const Node& n) {
  std::size_t d = 0;
  for (const auto& [label, c] : n.children) d = std::max(d, depth_of(*c));
  return d + 1;
}

// The script: fits the labels (measuring the rendered text), names the frame under the pointer,
// zooms on a click. Written for this file; data-x and data-w are fractions of the width.
constexpr const char* kScript = R"js(
(function () {
  var svg = document.documentElement, W = +svg.getAttribute('data-width');
  var frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));
  var details = document.getElementById('details'), reset = document.getElementById('reset');
  function label(g, width) {
    var text = g.querySelector('text'), name = g.getAttribute('data-n');
    text.textContent = name;
    if (width < 20) { text.textContent = ''; return; }
    var n = name.length;
    while (n > 0 && text.getComputedTextLength() > width - 6) {
      n = Math.min(n - 1, Math.floor(n * (width - 6) / text.getComputedTextLength()));
      text.textContent = n > 2 ? name.slice(0, n - 2) + '..' : '';
    }
  }
  function show(x0, w0, d0) {
    frames.forEach(function (g) {
      var x = +g.getAttribute('data-x'), w = +g.getAttribute('data-w'), d = +g.getAttribute('data-d');
      var rect = g.querySelector('rect'), text = g.querySelector('text');
      var inside = x >= x0 - 1e-9 && x + w <= x0 + w0 + 1e-9;
      var below = d < d0 && x <= x0 + 1e-9 && x + w >= x0 + w0 - 1e-9;
      if (!(inside || below)) { g.style.display = 'none'; return; }
      g.style.display = '';
      var px = below ? 0 : (x - x0) / w0 * W, pw = below ? W : w / w0 * W;
      rect.setAttribute('x', px.toFixed(2));
      rect.setAttribute('width', pw.toFixed(2));
      text.setAttribute('x', (px + 3).toFixed(2));
      g.style.opacity = below ? 0.6 : 1;
      label(g, pw);
    });
    reset.style.visibility = w0 < 1 ? 'visible' : 'hidden';
  }
  frames.forEach(function (g) {
    g.addEventListener('click', function () {
      show(+g.getAttribute('data-x'), +g.getAttribute('data-w'), +g.getAttribute('data-d'));
    });
    g.addEventListener('mouseover', function () { details.textContent = g.querySelector('title').textContent; });
    g.addEventListener('mouseout', function () { details.textContent = ' '; });
  });
  reset.addEventListener('click', function () { show(0, 1, 0); });
  document.addEventListener('keydown', function (e) { if (e.key === 'Escape') show(0, 1, 0); });
  show(0, 1, 0);
  svg.setAttribute('data-frames', String(frames.length));
})();
)js";

}  // namespace

std::string flame_graph_svg(const std::vector<NamedStack>& stacks, const std::string& title) {
  Node root;
  for (const NamedStack& s : stacks) {
    root.samples += s.samples;
    Node* n = &root;
    for (const Frame* f : s.frames) {
      auto& child = n->children[frame_label(*f)];
      if (!child) child = std::make_unique<Node>();
      child->samples += s.samples;
      child->kernel = f->kernel;
      n = child.get();
    }
  }
  Writer w;
  w.total = root.samples;
  w.height = kTop + static_cast<double>(depth_of(root)) * kFrameHeight + kBottom;
  if (root.samples) w.frame("all", root, 0, 0);
  const std::string heading = xml(title);
  std::string svg = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" data-width=\"{0:.0f}\" data-samples=\"{2}\">\n"
      "<style>text {{ font-family: monospace; font-size: 11px; fill: #000; pointer-events: none; }}\n"
      "g.f {{ cursor: pointer; }} g.f:hover rect {{ stroke: #222; stroke-width: 0.8; }}\n"
      "#heading {{ font-size: 16px; }} #reset {{ fill: #0645ad; cursor: pointer; pointer-events: auto; }}</style>\n"
      "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#fdfaf3\"/>\n"
      "<text id=\"heading\" x=\"{3:.0f}\" y=\"22\" text-anchor=\"middle\">{4}</text>\n"
      "<text id=\"reset\" x=\"8\" y=\"40\" style=\"visibility: hidden\">Reset zoom</text>\n"
      "<text id=\"details\" x=\"8\" y=\"{5:.0f}\"> </text>\n",
      kWidth, w.height, root.samples, kWidth / 2, heading, w.height - 12);
  svg += w.out;
  svg += fmt::format("<script type=\"text/ecmascript\"><![CDATA[{}]]></script>\n</svg>\n", kScript);
  return svg;
}

}  // namespace pmc_cli
