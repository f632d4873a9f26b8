// The lines of a text, for a range-for: `for (std::string_view line : text_lines(s))`. Each line
// is a view into the text without its '\n'; a last line without '\n' is a line, and a text that
// ends in '\n' has no empty line after it (an empty text has none). The loaders, the runtime's
// scanners and the compilers' outputs all read text a line at a time this way.
#pragma once

#include <cstddef>
#include <iterator>
#include <string_view>

namespace ukstap {

class TextLines {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::string_view;
    using difference_type = std::ptrdiff_t;
    using pointer = const std::string_view*;
    using reference = std::string_view;

    iterator() = default;
    iterator(std::string_view text, size_t pos) : text_(text), pos_(pos) { find_end(); }
    std::string_view operator*() const { return text_.substr(pos_, end_ - pos_); }
    iterator& operator++() {
      pos_ = end_ + 1 > text_.size() ? text_.size() : end_ + 1;
      find_end();
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const iterator& o) const { return pos_ == o.pos_; }
    bool operator!=(const iterator& o) const { return pos_ != o.pos_; }

   private:
    void find_end() {
      end_ = text_.find('\n', pos_);
      if (end_ == std::string_view::npos) end_ = text_.size();
    }
    std::string_view text_;
    size_t pos_ = 0, end_ = 0;
  };

  explicit TextLines(std::string_view text) : text_(text) {}
  iterator begin() const { return iterator(text_, 0); }
  iterator end() const { return iterator(text_, text_.size()); }

 private:
  std::string_view text_;
};

inline TextLines text_lines(std::string_view text) { return TextLines(text); }

}  // namespace ukstap
