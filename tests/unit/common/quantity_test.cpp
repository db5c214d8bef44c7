#include "common/quantity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

using namespace kubex::common;

namespace {

Quantity q(std::string_view s) {
  auto r = Quantity::parse(s);
  EXPECT_TRUE(r.has_value()) << s << ": " << (r ? "" : r.error().str());
  return r.value_or(Quantity());
}

constexpr std::int64_t kMaxI64 = std::numeric_limits<std::int64_t>::max();

}  // namespace

// GPU-3: the quantity spellings specs use.
TEST(Quantity, ParsesGpuSpellings) {
  EXPECT_EQ(q("500m").milli_value(), 500);  // GPU-3
  EXPECT_EQ(q("0.25").milli_value(), 250);  // GPU-3
  EXPECT_EQ(q("1").milli_value(), 1000);    // GPU-3
  EXPECT_EQ(q("0.7").str(), "700m");
  EXPECT_EQ(q("500m").str(), "500m");
  EXPECT_DOUBLE_EQ(q("0.7").as_double(), 0.7);
  EXPECT_DOUBLE_EQ(q("500m").as_double(), 0.5);
}

TEST(Quantity, AcceptsEveryDocumentedSpelling) {
  constexpr __int128 kUnit = 1'000'000'000;  // nano-units per unit
  constexpr __int128 kKi = 1024;
  const std::vector<std::pair<const char*, __int128>> cases = {
      {"500m", 500'000'000},
      {"0.7", 700'000'000},
      {"2e3", 2000 * kUnit},
      {"1.5", 1'500'000'000},
      {"+1", kUnit},
      {"-1", -kUnit},
      {"1E3", 1000 * kUnit},
      {"1e-3", 1'000'000},
      {"1E+3", 1000 * kUnit},
      {"12n", 12},
      {"5u", 5000},
      {".5", 500'000'000},
      {"1.", kUnit},
      {"1k", 1000 * kUnit},
      {"1M", 1'000'000 * kUnit},
      {"1G", 1'000'000'000 * kUnit},
      {"1T", 1'000'000'000'000 * kUnit},
      {"1P", 1'000'000'000'000'000 * kUnit},
      {"1E", 1'000'000'000'000'000'000 * kUnit},
      {"100Ki", 100 * kKi * kUnit},
      {"1Ki", kKi * kUnit},
      {"1Mi", kKi * kKi * kUnit},
      {"1Gi", kKi * kKi * kKi * kUnit},
      {"1Ti", kKi * kKi * kKi * kKi * kUnit},
      {"1Pi", kKi * kKi * kKi * kKi * kKi * kUnit},
      {"1Ei", kKi * kKi * kKi * kKi * kKi * kKi * kUnit},
      {"0", 0},
      {"-0", 0},
      {"0Ki", 0},
  };
  for (const auto& [in, nanos] : cases) {
    auto r = Quantity::parse(in);
    ASSERT_TRUE(r.has_value()) << in << ": " << r.error().str();
    EXPECT_TRUE(r->nano_value() == nanos) << in;
  }
}

TEST(Quantity, CanonicalisesLikeApimachinery) {
  // The brief's examples and the examples documented in apimachinery's quantity.go.
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"0.7", "700m"},
      {"1.5", "1500m"},
      {"1000m", "1"},
      {"2e3", "2e3"},
      {"1024Mi", "1Gi"},
      {"1536Mi", "1536Mi"},
      {"0.5Gi", "512Mi"},
      {"1500", "1500"},
      {"1.5k", "1500"},
      {"100Ki", "100Ki"},
      {"1.5Gi", "1536Mi"},
      {"307200Ki", "300Mi"},
      {"1025024Mi", "1001Gi"},
      {"1024Gi", "1Ti"},
      {"5000m", "5"},
      {"0.5", "500m"},
      {"1000M", "1G"},
      {"0.001T", "1G"},
      {"1000u", "1m"},
      {"1.08", "1080m"},
      {"1080000000n", "1080m"},
      {".001e12", "1e9"},
      {"0.001e0", "1e-3"},
      {"1000e-12", "1e-9"},
      {"00", "0"},
      {"1Ki", "1Ki"},
      {"1Mi", "1Mi"},
      {"1Gi", "1Gi"},
      {".001Ki", "1024m"},
      {".000001Ki", "1024u"},
      {".000000001Ki", "1024n"},
      {".000000000001Ki", "2n"},
      {"50k", "50k"},
      {"40T", "40T"},
      {"300T", "300T"},
      {"12E", "12E"},
      {"100.035k", "100035"},
      {"10.035M", "10035k"},
      {"1.2e3", "1200"},
      {"1.3E+6", "1300e3"},
      {"1.40e9", "1400e6"},
      {"100.035Ki", "102435840m"},
      {"0.05Gi", "53687091200m"},
      {"1.5Ki", "1536"},
      {"8Ki", "8Ki"},
      {"1Ei", "1Ei"},
      {"1.5Ei", "1536Pi"},
      {"0Ki", "0"},
      {"0.0005k", "500m"},
      {"1e0", "1"},
      {"80e-3", "80e-3"},
      {"300e6", "300e6"},
      {"2e4", "20e3"},
  };
  for (const auto& [in, want] : cases) {
    auto r = Quantity::parse(in);
    ASSERT_TRUE(r.has_value()) << in;
    EXPECT_EQ(r->canonical(), want) << in;
    // Negative values print the same with a leading '-'.
    auto neg = Quantity::parse(std::string("-") + in);
    ASSERT_TRUE(neg.has_value()) << in;
    if (!r->is_zero()) {
      EXPECT_EQ(neg->canonical(), std::string("-") + want) << in;
    }
  }
}

TEST(Quantity, StrIsWhatTheApiServerStores) {
  // Canonical inputs come back unchanged, non-canonical ones are normalised...
  EXPECT_EQ(q("1.5").str(), "1500m");
  EXPECT_EQ(q("1024Mi").str(), "1Gi");
  EXPECT_EQ(q("0.5Gi").str(), "512Mi");
  EXPECT_EQ(q("2e3").str(), "2e3");
  // ...except where apimachinery's fast path keeps the input verbatim (kubernetes/kubernetes#138165).
  EXPECT_EQ(q("+1").str(), "+1");
  EXPECT_EQ(q("+1").canonical(), "1");
  EXPECT_EQ(q("01").str(), "01");
  EXPECT_EQ(q("01").canonical(), "1");
  EXPECT_EQ(q("1.500").str(), "1.500");
  EXPECT_EQ(q("1.500").canonical(), "1500m");
  EXPECT_EQ(q("1.").str(), "1.");
  EXPECT_EQ(q("1.G").str(), "1.G");
  EXPECT_EQ(q("1E3").str(), "1E3");
  EXPECT_EQ(q("1E3").canonical(), "1e3");
  EXPECT_EQ(q("+1Ki").str(), "+1Ki");
  // Fast path not taken: too many binary digits of precision (Pi, Ei) or a fraction.
  EXPECT_EQ(q("+1Ei").str(), "1Ei");
  EXPECT_EQ(q("+1.5").str(), "1500m");
  EXPECT_EQ(q("1.0").str(), "1");
  EXPECT_EQ(q("1000").str(), "1k");
  EXPECT_EQ(q("0").str(), "0");
  // Arithmetic results are always canonical.
  EXPECT_EQ((q("+1") + q("0")).str(), "1");
}

TEST(Quantity, RoundsBelowOneNanoUp) {
  EXPECT_EQ(q("3.001n").str(), "4n");
  EXPECT_EQ(q("1.1E-9").str(), "2e-9");
  EXPECT_EQ(q("0.0000000001").str(), "1n");
  EXPECT_EQ(q("0.0000000005").str(), "1n");
  EXPECT_EQ(q("0.5e-9").str(), "1e-9");
  EXPECT_EQ(q("0.9n").str(), "1n");
  EXPECT_EQ(q("0.00000012345").str(), "124n");
  EXPECT_EQ(q("-0.9n").str(), "-1n");
  EXPECT_EQ(q("1e-40").str(), "1e-9");
  EXPECT_EQ(q("1.25e-9223372036854775807").str(), "1e-9");
  EXPECT_TRUE(q("0.00e9223372036854775807").is_zero());
  EXPECT_EQ(q("0.000000000001Ki").format(), QuantityFormat::DecimalSI);
}

TEST(Quantity, KeepsFormatFamily) {
  EXPECT_EQ(q("1Gi").format(), QuantityFormat::BinarySI);
  EXPECT_EQ(q("1G").format(), QuantityFormat::DecimalSI);
  EXPECT_EQ(q("1e9").format(), QuantityFormat::DecimalExponent);
  EXPECT_EQ(q("0.5").format(), QuantityFormat::DecimalSI);
  // BinarySI with a value below one unit becomes DecimalSI when parsed.
  EXPECT_EQ(q("0.0005Ki").format(), QuantityFormat::DecimalSI);
  EXPECT_EQ(q("0.0005Ki").str(), "512m");
}

TEST(Quantity, HandlesValuesBeyondInt64) {
  EXPECT_EQ(q("9999999999999999999").str(), "9999999999999999999");
  EXPECT_EQ(q("10E").str(), "10E");
  EXPECT_EQ(q("10000000000000000000").str(), "10E");
  EXPECT_EQ(q("9223372036854775807.1").str(), "9223372036854775807100m");
  EXPECT_EQ(q("-9223372036854775809").str(), "-9223372036854775809");
  EXPECT_EQ(q("10E").value(), kMaxI64);  // saturates
  EXPECT_EQ(q("-10E").value(), std::numeric_limits<std::int64_t>::min());
  // BinarySI is capped at 2^63-1 like apimachinery.
  EXPECT_EQ(q("9Ei").value(), kMaxI64);
  EXPECT_EQ(q("9223372036854775807Ki").str(), "9223372036854775807");
  // Above E there is no suffix; we keep E with a longer mantissa.
  EXPECT_EQ(q("1000E").str(), "1000E");
  EXPECT_EQ(q("1e27").str(), "1e27");
}

TEST(Quantity, RejectsMalformedInputNamingIt) {
  for (const char* bad : {"abc", "1.2.3", "1 Gi", "", "1Xi", "0.1am", "1KI", "1.1.M", "1+1.0M", "aoeu", " 1",
                          "1 ", "1e3e3", "1..", "1,5", "½", "0x10"}) {
    auto r = Quantity::parse(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().message.find(std::string("\"") + bad), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("quantities must match the regular expression"), std::string::npos)
        << bad;
  }
  // Right shape, wrong suffix.
  for (const char* bad : {"--1", "+-1", "0.1mi", ".5i", "1i", "-3.01i", "-3.01e-", "1e", "1e+", "1ee3",
                          "1Ki3", "1e99999999999999999999", "1mm"}) {
    auto r = Quantity::parse(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().message.find("unable to parse quantity's suffix"), std::string::npos)
        << bad << ": " << r.error().message;
  }
  auto nl = Quantity::parse("1\n");
  ASSERT_FALSE(nl.has_value());
  EXPECT_NE(nl.error().message.find("\"1\\x0a\""), std::string::npos) << nl.error().message;
  auto big = Quantity::parse("1e40");
  ASSERT_FALSE(big.has_value());
  EXPECT_NE(big.error().message.find("too large"), std::string::npos);
  EXPECT_FALSE(Quantity::parse("100000000000000000000000000000").has_value());
  EXPECT_TRUE(Quantity::parse("99999999999999999999999999999").has_value());
  EXPECT_FALSE(Quantity::parse("1e1000000000000000000").has_value());
}

TEST(Quantity, AcceptsDegenerateNumbersLikeApimachinery) {
  // apimachinery's scanner treats these as zero; kube-apiserver accepts them.
  for (const char* s : {".", "+", "-", "-.", ".Ki", "Gi", "m", "e3", "0e99999"}) {
    auto r = Quantity::parse(s);
    ASSERT_TRUE(r.has_value()) << s;
    EXPECT_TRUE(r->is_zero()) << s;
    EXPECT_EQ(r->str(), "0") << s;
  }
}

TEST(Quantity, FromJsonTakesIntOrString) {
  using nlohmann::json;
  auto i = Quantity::from_json(json(4));  // GPU-3
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ(i->str(), "4");
  auto s = Quantity::from_json(json("500m"));  // GPU-3
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->milli_value(), 500);
  auto f = Quantity::from_json(json(0.25));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->str(), "250m");
  auto f2 = Quantity::from_json(json(1.0));
  ASSERT_TRUE(f2.has_value());
  EXPECT_EQ(f2->str(), "1");
  auto fbig = Quantity::from_json(json(1e21));
  ASSERT_TRUE(fbig.has_value());
  EXPECT_EQ(fbig->canonical(), "1e21");
  auto u = Quantity::from_json(json(std::numeric_limits<std::uint64_t>::max()));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->str(), "18446744073709551615");
  auto neg = Quantity::from_json(json(-3));
  ASSERT_TRUE(neg.has_value());
  EXPECT_EQ(neg->value(), -3);
  auto ws = Quantity::from_json(json(" 1 "));
  ASSERT_TRUE(ws.has_value());
  EXPECT_EQ(ws->str(), "1");
  for (const json& bad :
       {json(nullptr), json(true), json::object(), json::array({1}), json("abc"), json(""), json("   ")}) {
    auto r = Quantity::from_json(bad);
    EXPECT_FALSE(r.has_value()) << bad.dump();
    if (!r) {
      EXPECT_NE(r.error().message.find("invalid quantity"), std::string::npos);
    }
  }
  EXPECT_FALSE(Quantity::from_json(json(std::numeric_limits<double>::infinity())).has_value());
}

TEST(Quantity, ValueAndMilliValueRoundAwayFromZero) {
  EXPECT_EQ(q("1500m").value(), 2);
  EXPECT_EQ(q("1").value(), 1);
  EXPECT_EQ(q("1n").value(), 1);
  EXPECT_EQ(q("-1500m").value(), -2);
  EXPECT_EQ(q("1n").milli_value(), 1);
  EXPECT_EQ(q("1.0001").milli_value(), 1001);
  EXPECT_EQ(q("2Ki").value(), 2048);
  EXPECT_EQ(q("0").value(), 0);
  EXPECT_EQ(q("1E").milli_value(), kMaxI64);
}

TEST(Quantity, ConstructsFromUnitsAndMilliUnits) {
  EXPECT_EQ(Quantity(4).str(), "4");
  EXPECT_EQ(Quantity(1000).str(), "1k");
  EXPECT_EQ(Quantity(5, QuantityFormat::BinarySI).str(), "5");
  EXPECT_EQ(Quantity(6 * 1024, QuantityFormat::BinarySI).str(), "6Ki");
  EXPECT_EQ(Quantity(1025, QuantityFormat::BinarySI).str(), "1025");
  EXPECT_EQ(Quantity(std::int64_t{1} << 30, QuantityFormat::BinarySI).str(), "1Gi");
  EXPECT_EQ(Quantity(1000, QuantityFormat::DecimalExponent).str(), "1e3");
  EXPECT_EQ(Quantity::from_milli(500).str(), "500m");
  EXPECT_EQ(Quantity::from_milli(1500).str(), "1500m");
  EXPECT_EQ(Quantity::from_milli(2000).str(), "2");
  EXPECT_EQ(Quantity::from_milli(1234567, QuantityFormat::BinarySI).str(), "1234567m");
  EXPECT_EQ(Quantity::from_milli(-1).str(), "-1m");
  EXPECT_EQ(Quantity::from_nanos(1).str(), "1n");
  EXPECT_EQ(Quantity().str(), "0");
  EXPECT_TRUE(Quantity().is_zero());
  EXPECT_EQ(Quantity(kMaxI64).value(), kMaxI64);
  EXPECT_EQ(Quantity(std::numeric_limits<std::int64_t>::min()).value(),
            std::numeric_limits<std::int64_t>::min());
}

TEST(Quantity, ComparesByValueNotFormat) {
  EXPECT_EQ(q("1Ki"), q("1024"));
  EXPECT_EQ(q("1"), q("1000m"));
  EXPECT_EQ(q("1e3"), q("1k"));
  EXPECT_LT(q("500m"), q("1"));
  EXPECT_GT(q("1Gi"), q("1G"));
  EXPECT_LT(q("-1"), q("0"));
  EXPECT_NE(q("1n"), q("0"));
  EXPECT_LE(q("0.25"), q("250m"));
  EXPECT_TRUE((q("2") <=> q("1")) == std::strong_ordering::greater);
}

TEST(Quantity, AddsAndSubtracts) {
  EXPECT_EQ((q("1") + q("500m")).str(), "1500m");
  EXPECT_EQ((q("1Gi") + q("1Gi")).str(), "2Gi");
  EXPECT_EQ((q("1Gi") - q("1Gi")).str(), "0");
  EXPECT_EQ((q("1") - q("1500m")).str(), "-500m");
  EXPECT_EQ((-q("250m")).str(), "-250m");
  // A zero left operand takes the right operand's format (apimachinery Add/Sub).
  EXPECT_EQ((Quantity() + q("1Gi")).str(), "1Gi");
  EXPECT_EQ((q("0") - q("1Gi")).str(), "-1Gi");
  // Otherwise the left operand's format wins.
  EXPECT_EQ((q("1k") + q("24")).str(), "1024");
  EXPECT_EQ((q("1Ki") + q("1k")).str(), "2024");
  Quantity acc;
  for (int i = 0; i < 4; ++i) acc += q("250m");
  EXPECT_EQ(acc, q("1"));
  acc -= q("1");
  EXPECT_TRUE(acc.is_zero());
  // Saturates instead of overflowing.
  Quantity big = q("99999999999999999999999999999");
  EXPECT_EQ((big + big), big + q("1"));
  EXPECT_EQ((-big - big).sign(), -1);
}

TEST(Quantity, SignAndZero) {
  EXPECT_EQ(q("-1m").sign(), -1);
  EXPECT_EQ(q("0m").sign(), 0);
  EXPECT_EQ(q("1m").sign(), 1);
  EXPECT_TRUE(q("0Gi").is_zero());
  EXPECT_FALSE(q("1n").is_zero());
}

TEST(Quantity, NeverCrashesOnGarbage) {
  std::mt19937 rng(12345);
  const std::string alphabet = "0123456789.+-eEinumkKMGTPx ";
  int ok = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    std::size_t len = rng() % 12;
    for (std::size_t j = 0; j < len; ++j) s += alphabet[rng() % alphabet.size()];
    auto r = Quantity::parse(s);
    if (r) {
      ++ok;
      // Whatever parses must print something that parses back to the same value.
      auto back = Quantity::parse(r->str());
      ASSERT_TRUE(back.has_value()) << s << " -> " << r->str();
      EXPECT_EQ(*back, *r) << s;
      auto canon = Quantity::parse(r->canonical());
      ASSERT_TRUE(canon.has_value()) << s;
      EXPECT_EQ(*canon, *r) << s;
      (void)r->as_double();
      (void)r->value();
      (void)r->milli_value();
    }
  }
  EXPECT_GT(ok, 100);
  std::string huge(100000, '9');
  EXPECT_FALSE(Quantity::parse(huge).has_value());
  std::string tiny = "0." + std::string(100000, '0') + "1";
  auto t = Quantity::parse(tiny);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->str(), "1n");
  EXPECT_FALSE(Quantity::parse(std::string("1\0", 2)).has_value());
}
