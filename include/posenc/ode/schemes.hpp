// SPDX-License-Identifier: MIT
// The shipped explicit Runge-Kutta schemes, each a tableau (see posenc/ode/tableau.hpp).
#pragma once

#include <posenc/ode/tableau.hpp>

namespace posenc::ode::schemes {

/// Forward Euler, order 1.
struct euler {
  static constexpr std::string_view name = "euler";
  static constexpr int order = 1;
  static constexpr tableau<1> coefficients = {.a = {{{0}}}, .b = {1}, .c = {0}};
};

/// Explicit midpoint, order 2.
struct midpoint {
  static constexpr std::string_view name = "midpoint";
  static constexpr int order = 2;
  static constexpr tableau<2> coefficients = {.a = {{{0, 0}, {0.5L, 0}}}, .b = {0, 1}, .c = {0, 0.5L}};
};

/// Heun's method (explicit trapezoid), order 2.
struct heun {
  static constexpr std::string_view name = "heun";
  static constexpr int order = 2;
  static constexpr tableau<2> coefficients = {.a = {{{0, 0}, {1, 0}}}, .b = {0.5L, 0.5L}, .c = {0, 1}};
};

/// Ralston's second-order method (minimal truncation-error bound).
struct ralston {
  static constexpr std::string_view name = "ralston";
  static constexpr int order = 2;
  static constexpr tableau<2> coefficients = {
      .a = {{{0, 0}, {2.0L / 3, 0}}}, .b = {0.25L, 0.75L}, .c = {0, 2.0L / 3}};
};

/// Kutta's third-order method.
struct kutta3 {
  static constexpr std::string_view name = "kutta3";
  static constexpr int order = 3;
  static constexpr tableau<3> coefficients = {
      .a = {{{0, 0, 0}, {0.5L, 0, 0}, {-1, 2, 0}}}, .b = {1.0L / 6, 2.0L / 3, 1.0L / 6}, .c = {0, 0.5L, 1}};
};

/// The classic fourth-order Runge-Kutta method (1/6, 1/3, 1/3, 1/6).
struct rk4 {
  static constexpr std::string_view name = "rk4";
  static constexpr int order = 4;
  static constexpr tableau<4> coefficients = {
      .a = {{{0, 0, 0, 0}, {0.5L, 0, 0, 0}, {0, 0.5L, 0, 0}, {0, 0, 1, 0}}},
      .b = {1.0L / 6, 1.0L / 3, 1.0L / 3, 1.0L / 6},
      .c = {0, 0.5L, 0.5L, 1}};
};

/// Kutta's 3/8 rule, order 4. This is what torchdiffeq calls `rk4` and what the FLOATER
/// reference code integrates with.
struct rk4_38 {
  static constexpr std::string_view name = "rk4_38";
  static constexpr int order = 4;
  static constexpr tableau<4> coefficients = {
      .a = {{{0, 0, 0, 0}, {1.0L / 3, 0, 0, 0}, {-1.0L / 3, 1, 0, 0}, {1, -1, 1, 0}}},
      .b = {1.0L / 8, 3.0L / 8, 3.0L / 8, 1.0L / 8},
      .c = {0, 1.0L / 3, 2.0L / 3, 1}};
};

/// Heun-Euler 2(1) embedded pair (adaptive Heun), FSAL-free.
struct heun_euler {
  static constexpr std::string_view name = "heun_euler";
  static constexpr int order = 2;
  static constexpr int error_order = 1;
  static constexpr bool fsal = false;
  static constexpr tableau<2> coefficients = {
      .a = {{{0, 0}, {1, 0}}}, .b = {0.5L, 0.5L}, .c = {0, 1}, .b_low = {1, 0}};
};

/// Bogacki-Shampine 3(2), FSAL.
struct bogacki_shampine {
  static constexpr std::string_view name = "bogacki_shampine";
  static constexpr int order = 3;
  static constexpr int error_order = 2;
  static constexpr bool fsal = true;
  static constexpr tableau<4> coefficients = {
      .a = {{{0, 0, 0, 0}, {0.5L, 0, 0, 0}, {0, 0.75L, 0, 0}, {2.0L / 9, 1.0L / 3, 4.0L / 9, 0}}},
      .b = {2.0L / 9, 1.0L / 3, 4.0L / 9, 0},
      .c = {0, 0.5L, 0.75L, 1},
      .b_low = {7.0L / 24, 0.25L, 1.0L / 3, 0.125L}};
};

/// Dormand-Prince 5(4), FSAL, with its fourth-order continuous extension (Hairer, Norsett &
/// Wanner, Solving ODEs I, II.6; Shampine 1986).
struct dopri5 {
  static constexpr std::string_view name = "dopri5";
  static constexpr int order = 5;
  static constexpr int error_order = 4;
  static constexpr bool fsal = true;
  static constexpr tableau<7> coefficients = {
      .a = {{{0, 0, 0, 0, 0, 0, 0},
             {1.0L / 5, 0, 0, 0, 0, 0, 0},
             {3.0L / 40, 9.0L / 40, 0, 0, 0, 0, 0},
             {44.0L / 45, -56.0L / 15, 32.0L / 9, 0, 0, 0, 0},
             {19372.0L / 6561, -25360.0L / 2187, 64448.0L / 6561, -212.0L / 729, 0, 0, 0},
             {9017.0L / 3168, -355.0L / 33, 46732.0L / 5247, 49.0L / 176, -5103.0L / 18656, 0, 0},
             {35.0L / 384, 0, 500.0L / 1113, 125.0L / 192, -2187.0L / 6784, 11.0L / 84, 0}}},
      .b = {35.0L / 384, 0, 500.0L / 1113, 125.0L / 192, -2187.0L / 6784, 11.0L / 84, 0},
      .c = {0, 1.0L / 5, 3.0L / 10, 4.0L / 5, 8.0L / 9, 1, 1},
      .b_low = {5179.0L / 57600, 0, 7571.0L / 16695, 393.0L / 640, -92097.0L / 339200, 187.0L / 2100,
                1.0L / 40}};
  // b_i(theta) = sum_p dense[i][p] theta^(p+1); b_i(1) = b_i.
  static constexpr std::array<std::array<long double, 4>, 7> dense = {{
      {1, -8048581381.0L / 2820520608, 8663915743.0L / 2820520608, -12715105075.0L / 11282082432},
      {0, 0, 0, 0},
      {0, 131558114200.0L / 32700410799, -68118460800.0L / 10900136933, 87487479700.0L / 32700410799},
      {0, -1754552775.0L / 470086768, 14199869525.0L / 1410260304, -10690763975.0L / 1880347072},
      {0, 127303824393.0L / 49829197408, -318862633887.0L / 49829197408, 701980252875.0L / 199316789632},
      {0, -282668133.0L / 205662961, 2019193451.0L / 616988883, -1453857185.0L / 822651844},
      {0, 40617522.0L / 29380423, -110615467.0L / 29380423, 69997945.0L / 29380423},
  }};
};

/// Tsitouras 5(4), FSAL (Ch. Tsitouras, Comput. Math. Appl. 62 (2011) 770-775).
struct tsit5 {
  static constexpr std::string_view name = "tsit5";
  static constexpr int order = 5;
  static constexpr int error_order = 4;
  static constexpr bool fsal = true;
  static constexpr tableau<7> coefficients = {
      .a = {{{0, 0, 0, 0, 0, 0, 0},
             {0.161L, 0, 0, 0, 0, 0, 0},
             {-0.008480655492356988544426874250230774675L, 0.3354806554923569885444268742502307746751L, 0, 0, 0, 0, 0},
             {2.897153057105493432130432594192938764925L, -6.359448489975074843148159912383825625953L,
              4.362295432869581411017727318190886861028L, 0, 0, 0, 0},
             {5.325864828439256604428877920840511317836L, -11.74888356406282787774717033978577296189L,
              7.495539342889836208304604784564358155659L, -0.09249506636175524925650207933207191611350L, 0, 0, 0},
             {5.861455442946420028659251486982647890394L, -12.92096931784710929170611868178335939542L,
              8.159367898576158643180400794539253485182L, -0.07158497328140099722453054252582973869127L,
              -0.02826905039406838290900305721271224146718L, 0, 0},
             {0.09646076681806522951816731316512876333712L, 0.01L, 0.4798896504144995747752495322905965199130L,
              1.379008574103741893192274821856872770756L, -3.290069515436080679901047585711363850116L,
              2.324710524099773982415355918398765796109L, 0}}},
      .b = {0.09646076681806522951816731316512876333712L, 0.01L, 0.4798896504144995747752495322905965199130L,
            1.379008574103741893192274821856872770756L, -3.290069515436080679901047585711363850116L,
            2.324710524099773982415355918398765796109L, 0},
      .c = {0, 0.161L, 0.327L, 0.9L, 0.9800255409045096857298102862870245954942L, 1, 1},
      .b_low = {0.09468075576583945807478876255758922856118L, 0.009183565540343253096776363936645313759814L,
                0.4877705284247615707855642599631228241517L, 1.234297566930478985655109673884237654036L,
                -2.707712349983525454881109975059321670690L, 1.866628418170587035753719399566211498666L,
                1.0L / 66}};
  // Tsitouras' continuous extension of order 4 (the interpolant of the paper, as used by
  // torchdiffeq and OrdinaryDiffEq.jl): b_i(theta) = sum_p dense[i][p] theta^(p+1); b_i(1) = b_i.
  static constexpr std::array<std::array<long double, 4>, 7> dense = {{
      {1, -2.763706197274825911336736L, 2.913255461821912743750681L, -1.0530884977290216L},
      {0, 0.1317L, -0.2234L, 0.1017L},
      {0, 3.930296236894751528506874L, -5.941033872131504734702492L, 2.490627285651252793L},
      {0, -12.41107716693367698373438L, 30.33818863028232159817299L, -16.54810288924490272L},
      {0, 37.50931341651103919496904L, -88.17890489476640110142767L, 47.37952196281928122L},
      {0, -27.89652628919728780594826L, 65.09189467479367152629022L, -34.87065786149660974L},
      {0, 1.5L, -4, 2.5L},
  }};
};

}  // namespace posenc::ode::schemes
