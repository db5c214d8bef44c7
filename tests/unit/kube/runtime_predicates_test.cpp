// Event predicates (kube/runtime/predicates.h) on the projections the controllers use: generation, labels
// and annotations changes, and the controller ownerReference an owned object's event follows (SEL-1).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/objects.h"
#include "api/views.h"
#include "kube/runtime/predicates.h"

namespace kubex::kube {
namespace {

using common::IStr;

api::OwnerRef ref(const char* kind, const char* name, const char* uid, bool controller) {
  return {IStr("apps/v1"), IStr(kind), IStr(name), uid, controller};
}

// OBS-1: status writes leave metadata.generation alone, so only spec changes are work for the status
// controllers; an add or a delete (a missing side) always is.
TEST(Predicates, GenerationChanged) {
  api::ObjectMeta a, b;
  a.generation = b.generation = 3;
  b.labels["x"] = "y";  // anything but the generation
  b.resource_version = "42";
  EXPECT_FALSE(generation_changed(&a, &b));
  b.generation = 4;
  EXPECT_TRUE(generation_changed(&a, &b));
  EXPECT_TRUE(generation_changed<api::ObjectMeta>(nullptr, &b));
  EXPECT_TRUE(generation_changed<api::ObjectMeta>(&a, nullptr));
  EXPECT_TRUE(generation_changed<api::ObjectMeta>(nullptr, nullptr));
  api::WorkloadView w1, w2;  // any type with a generation
  w1.generation = w2.generation = 7;
  EXPECT_FALSE(generation_changed(&w1, &w2));
}

TEST(Predicates, LabelsAndAnnotationsChanged) {
  api::WorkloadView a, b;
  a.labels = {{IStr("app"), IStr("train")}};
  b.labels = a.labels;
  a.annotations = {{IStr("rightsizing.kubex.ai/pause-until"), IStr("infinite")}};
  b.annotations = a.annotations;
  b.generation = 9;  // a spec change alone changes neither
  EXPECT_FALSE(labels_changed(&a, &b));
  EXPECT_FALSE(annotations_changed(&a, &b));
  b.labels = {{IStr("app"), IStr("serve")}};
  EXPECT_TRUE(labels_changed(&a, &b));
  EXPECT_FALSE(annotations_changed(&a, &b));
  b.annotations.clear();
  EXPECT_TRUE(annotations_changed(&a, &b));
  EXPECT_TRUE(labels_changed<api::WorkloadView>(nullptr, &b));
  EXPECT_TRUE(annotations_changed<api::WorkloadView>(&a, nullptr));
  api::ObjectMeta m1, m2;  // typed kubex objects keep labels in their meta
  m1.labels = m2.labels = {{"team", "ml"}};
  EXPECT_FALSE(labels_changed(&m1, &m2));
}

// SEL-1: the owner chain follows the ownerReference with controller: true, not the first one.
TEST(Predicates, ControllerOf) {
  api::PodView pod;
  EXPECT_EQ(controller_of(pod.owners), nullptr);  // a bare pod
  pod.owners = {ref("ConfigMap", "cfg", "u0", false), ref("ReplicaSet", "web-1", "u1", true)};
  const api::OwnerRef* c = controller_of(pod.owners);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->name.str(), "web-1");
  pod.owners = {ref("ReplicaSet", "web-1", "u1", false)};
  EXPECT_EQ(controller_of(pod.owners), nullptr);  // an owner that is not the controller
}

TEST(Predicates, ControllerChanged) {
  const std::vector<api::OwnerRef> none;
  const std::vector<api::OwnerRef> rs1 = {ref("ReplicaSet", "web-1", "u1", true)};
  const std::vector<api::OwnerRef> rs1_new_uid = {ref("ReplicaSet", "web-1", "u9", true)};
  const std::vector<api::OwnerRef> rs2 = {ref("ReplicaSet", "web-2", "u2", true)};
  const std::vector<api::OwnerRef> job1 = {ref("Job", "web-1", "u3", true)};
  const std::vector<api::OwnerRef> rs1_plus = {ref("ConfigMap", "cfg", "u0", false), rs1.front()};
  EXPECT_FALSE(controller_changed(none, none));
  EXPECT_FALSE(controller_changed(rs1, rs1));
  EXPECT_FALSE(controller_changed(rs1, rs1_plus));     // other owners do not count
  EXPECT_FALSE(controller_changed(rs1, rs1_new_uid));  // same kind and name
  EXPECT_TRUE(controller_changed(rs1, rs2));
  EXPECT_TRUE(controller_changed(rs1, job1));
  EXPECT_TRUE(controller_changed(none, rs1));  // adopted
  EXPECT_TRUE(controller_changed(rs1, none));  // orphaned
}

// The owner-uid index: every owner with a uid, controller or not.
TEST(Predicates, OwnerUids) {
  const std::vector<api::OwnerRef> owners = {ref("ConfigMap", "cfg", "u0", false),
                                             ref("ReplicaSet", "web-1", "", true),
                                             ref("ReplicaSet", "web-2", "u2", true)};
  EXPECT_EQ(owner_uids(owners), (std::vector<std::string_view>{"u0", "u2"}));
  EXPECT_TRUE(owner_uids(std::vector<api::OwnerRef>{}).empty());
}

}  // namespace
}  // namespace kubex::kube
