// {fmt}'s compiled part, built once here. Debian ships fmt as headers plus a shared library only;
// linking libfmt.so would make the program need it at run time, and defining FMT_HEADER_ONLY
// instead compiles fmt's implementation (format-inl.h) into every one of the ~120 files that
// format, which made each C++ file take about twice as long to build (console.cpp: 11.1 s against
// 4.6 s). So the other files see only fmt's declarations, and this file holds the definitions.
// The explicit instantiations are those format.h declares `extern template` or leaves to the
// library for fmt 9; a missing one is a link error, not a silent fallback.
#include <fmt/format-inl.h>

#if FMT_VERSION < 90000 || FMT_VERSION >= 100000
#error "fmt_library.cpp instantiates fmt 9's library part: check its list against this fmt version"
#endif

FMT_BEGIN_NAMESPACE
namespace detail {
template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view,
                                 basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
template FMT_API void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);
}  // namespace detail
FMT_END_NAMESPACE
