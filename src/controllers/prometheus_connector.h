// Where a recommender's Prometheus client comes from (prom::connect in the engine, a fake in tests): the reactive
// recommender's cycles and the proactive history evaluations ask for one with the current settings each time; an
// implementation keeps its client (and connections) while the settings stay.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"

namespace kubex::prom {
class Querier;
struct Options;
}  // namespace kubex::prom
namespace kubex::api {
struct GlobalConfigSpec;
}

namespace kubex::controllers {

class PrometheusConnector {
 public:
  virtual ~PrometheusConnector() = default;
  virtual common::Result<std::shared_ptr<prom::Querier>> connect(const prom::Options& options) = 0;
};
// prom::connect, keeping the client while the settings are the same.
std::unique_ptr<PrometheusConnector> prometheus_connector();

// The engine's Prometheus settings: global-config's spec.prometheus.url and .requestTimeout, and the
// --prometheus-bearer-token-file / --prometheus-ca-file flags.
prom::Options prometheus_options(const api::GlobalConfigSpec& global, const std::string& bearer_token_file,
                                 const std::string& ca_file);

}  // namespace kubex::controllers
