/*
 * demangle() and demangle__short() on names taken from binaries built here:
 * nm of tests/targets/rust_inline (rustc 1.95: legacy _ZN...17h<hash>E for
 * the crate, v0 _R... for std) and of a small g++ 12 program.
 */
#include "util/symbols/demangle.h"

#include <locale.h>
#include <stdlib.h>

#include "tap.h"

static void dm(const char *mangled, const char *want)
{
	char *d = demangle(mangled);

	is_str(d, want, "demangle %.40s", mangled);
	free(d);
}

static void sh(const char *name, size_t width, const char *want)
{
	char buf[512];

	is_str(demangle__short(name, width, buf, sizeof(buf)), want, "short(%zu) %.40s", width,
	       name);
}

int main(void)
{
	char buf[16];

	/* Rust legacy: the hash goes */
	dm("_ZN11rust_inline4main17h55c76bbd61d325faE", "rust_inline::main");
	dm("_ZN4core3ptr35drop_in_place$LT$std..env..Args$GT$17hda3cf4cd98bf975cE",
	   "core::ptr::drop_in_place<std::env::Args>");
	dm("_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h3076605c06570193E",
	   "std::rt::lang_start::{{closure}}");
	/* Rust v0: the crate disambiguators go; the allocator shim of current rustc */
	dm("_RNvCsfLfy6EI15iL_7___rustc12___rust_alloc", "__rustc::__rust_alloc");
	dm("_RNvCsfLfy6EI15iL_7___rustc19___rust_alloc_zeroed", "__rustc::__rust_alloc_zeroed");
	dm("_RNvXs9_NtNtCsjrHSEGnQ3l9_3std2io5implsINtNtCslNYArtu3iFV_5alloc3vec3VechENtB7_5"
	   "Write14write_vectoredB9_", "<alloc::vec::Vec<u8> as std::io::Write>::write_vectored");
	dm("_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtNtCslNYArtu3iFV_5alloc3vec3VecNtNtBL_"
	   "6string6StringEECsjrHSEGnQ3l9_3std",
	   "core::ptr::drop_in_place::<alloc::vec::Vec<alloc::string::String>>");
	/*
	 * One function, one spelling (issue 12): RawVecInner::finish_grow as the
	 * crate's legacy instance and as std's v0 copy; parameter names go,
	 * types stay; a trait's or a primitive's qualified path stays.
	 */
	dm("_ZN5alloc7raw_vec20RawVecInner$LT$A$GT$11finish_grow17h5a8cacd05cc4c8b3E",
	   "alloc::raw_vec::RawVecInner::finish_grow");
	dm("_RNvMs4_NtCslNYArtu3iFV_5alloc7raw_vecNtB5_11RawVecInner11finish_growCsjrHSEGnQ3l9_3std",
	   "alloc::raw_vec::RawVecInner::finish_grow");
	dm("_ZN5alloc7raw_vec19RawVec$LT$T$C$A$GT$8grow_one17ha5fe4a16f7dd746fE",
	   "alloc::raw_vec::RawVec::grow_one");
	dm("_RNvMs3_NtCslNYArtu3iFV_5alloc7raw_vecINtB5_6RawVecNtNtB7_6string6StringE8grow_one"
	   "CsjrHSEGnQ3l9_3std", "alloc::raw_vec::RawVec<alloc::string::String>::grow_one");
	/* C++ */
	dm("_ZNSt6vectorIiSaIiEE9push_backERKi",
	   "std::vector<int, std::allocator<int> >::push_back(int const&)");
	/* not mangled */
	dm("main", NULL);
	dm("__GI_qsort", NULL);
	dm("", NULL);
	dm(NULL, NULL);

	/* short forms: generics elided, hashes and C++ parameters dropped */
	sh("rust_inline::main", 0, "rust_inline::main");
	sh("core::ptr::drop_in_place<std::env::Args>", 0, "core::ptr::drop_in_place<..>");
	sh("core::ptr::drop_in_place::<alloc::vec::Vec<alloc::string::String>>", 0,
	   "core::ptr::drop_in_place::<..>");
	sh("<alloc::vec::Vec<u8> as std::io::Write>::write_vectored", 0,
	   "<alloc::vec::Vec<..> as std::io::Write>::write_vectored");
	sh("alloc::vec::Vec<T,A>::push", 0, "alloc::vec::Vec<..>::push");
	sh("core::num::<impl u64>::wrapping_mul", 0, "core::num::<impl u64>::wrapping_mul");
	sh("std::vector<int, std::allocator<int> >::push_back(int const&)", 0,
	   "std::vector<..>::push_back");
	sh("foo::bar::h0123456789abcdef", 0, "foo::bar");
	sh("operator<<", 0, "operator<<");
	sh("Box<dyn Fn() -> u32>::call", 0, "Box<..>::call");
	sh(NULL, 10, "[unknown]");
	/* cut from the left at a path separator to fit the width */
	sh("app::parser::Parser::parse_line", 20, "..::parse_line");
	sh("app::parser::Parser::parse_line", 31, "app::parser::Parser::parse_line");
	sh("app::parser::Parser::parse_line", 30, "..::parser::Parser::parse_line");
	sh("app::parser::Parser::parse_line", 29, "..::Parser::parse_line");
	sh("a_really_long_function_name_without_separators", 12, "..separators");
	/* a UTF-8 locale gets the one-column ellipsis */
	if (setlocale(LC_CTYPE, "C.UTF-8")) {
		sh("app::parser::Parser::parse_line", 20, "\u2026::parse_line");
		sh("app::parser::Parser::parse_line", 29, "\u2026::parser::Parser::parse_line");
		sh("alloc::vec::Vec<T,A>::push", 0, "alloc::vec::Vec<\u2026>::push");
		setlocale(LC_CTYPE, "C");
	} else {
		tap_skip("no C.UTF-8 locale");
	}
	/* a small buffer truncates, never overflows */
	demangle__short("app::parser::Parser::parse_line", 0, buf, sizeof(buf));
	is_int(strlen(buf), sizeof(buf) - 1, "short into a small buffer is truncated");
	return done_testing();
}
