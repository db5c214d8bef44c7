// The owner kinds of SEL-1 (and ReplicaSet, the link in Deployment and Rollout chains) as the REST API names
// them: their apiVersion and resource plural. One table for the owner reads (observe/owners) and the owner
// writes (act/owner_annotations).
#pragma once

#include <string_view>

namespace kubex::api {

struct OwnerKind {
  std::string_view kind, api_version, plural;
};

// The entry of `kind` ("Deployment" -> apps/v1, deployments), nullptr for kinds kubex does not follow.
const OwnerKind* owner_kind(std::string_view kind);

}  // namespace kubex::api
