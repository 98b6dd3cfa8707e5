// Reading ONNX files (importers/onnx/OnnxFile.h): ONNX's own conformance models, tensors kept
// in external files as PyTorch's exporter writes them, and files that must be refused with a
// message naming the problem.
#include "importers/onnx/OnnxFile.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace dp::onnx_import {
namespace {

class OnnxFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "dp-onnx-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  std::string path(const std::string &name) const { return dir_ + "/" + name; }
  void write(const std::string &name, const std::string &bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }

  /// y = x + w, f32 [2, 2], with w's data in `location` (external) at `offset`, `length`
  /// bytes; an empty location keeps it in the model.
  static onnx::ModelProto addModel(const std::string &location, const std::string &offset = "",
                                   const std::string &length = "") {
    onnx::ModelProto m;
    m.set_ir_version(8);
    onnx::OperatorSetIdProto *o = m.add_opset_import();
    o->set_domain("");
    o->set_version(17);
    onnx::GraphProto *g = m.mutable_graph();
    g->set_name("add");
    for (const char *name : {"x", "y"}) {
      onnx::ValueInfoProto *v = std::string(name) == "x" ? g->add_input() : g->add_output();
      v->set_name(name);
      onnx::TypeProto_Tensor *t = v->mutable_type()->mutable_tensor_type();
      t->set_elem_type(onnx::TensorProto::FLOAT);
      t->mutable_shape()->add_dim()->set_dim_value(2);
      t->mutable_shape()->add_dim()->set_dim_value(2);
    }
    onnx::TensorProto *w = g->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(2);
    w->add_dims(2);
    if (location.empty()) {
      for (float v : {1.f, 2.f, 3.f, 4.f})
        w->add_float_data(v);
    } else {
      w->set_data_location(onnx::TensorProto::EXTERNAL);
      auto entry = [&](const char *key, const std::string &value) {
        if (value.empty())
          return;
        onnx::StringStringEntryProto *e = w->add_external_data();
        e->set_key(key);
        e->set_value(value);
      };
      entry("location", location);
      entry("offset", offset);
      entry("length", length);
    }
    onnx::NodeProto *n = g->add_node();
    n->set_op_type("Add");
    n->set_name("add0");
    n->add_input("x");
    n->add_input("w");
    n->add_output("y");
    return m;
  }

  std::string read(const onnx::ModelProto &m, OnnxFile &out, const OnnxLimits &limits = {}) {
    write("m.onnx", m.SerializeAsString());
    return readOnnxFile(path("m.onnx"), out, limits);
  }

  /// Four floats (16 bytes): 1, 2, 3, 4.
  static std::string floats() {
    const std::vector<float> v = {1, 2, 3, 4};
    return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float));
  }

  std::string dir_;
};

TEST_F(OnnxFileTest, ReadsAConformanceModelAndChecksIt) {
  const std::string relu = std::string(DP_ONNX_TESTDATA) + "/node/test_relu/model.onnx";
  if (::access(relu.c_str(), R_OK) != 0)
    GTEST_SKIP() << relu << " is missing (libonnx-testdata)";
  OnnxFile f;
  ASSERT_EQ(readOnnxFile(relu, f), "");
  EXPECT_TRUE(f.checked);
  EXPECT_EQ(f.opset, 14);
  ASSERT_EQ(f.model.graph().node_size(), 1);
  EXPECT_EQ(f.model.graph().node(0).op_type(), "Relu");
  EXPECT_EQ(libraryIrVersion(), 8);
  EXPECT_GE(libraryOpset(), 17);
}

TEST_F(OnnxFileTest, LoadsExternalDataIntoTheModel) {
  // Two tensors' worth in one file, as an exporter packs them; w is the second.
  write("m.onnx.data", std::string(16, '\0') + floats());
  OnnxFile f;
  ASSERT_EQ(read(addModel("m.onnx.data", "16", "16"), f), "");
  EXPECT_TRUE(f.checked);
  const onnx::TensorProto &w = f.model.graph().initializer(0);
  EXPECT_EQ(w.data_location(), onnx::TensorProto::DEFAULT);
  EXPECT_EQ(w.external_data_size(), 0);
  EXPECT_EQ(w.raw_data(), floats());
  // Without a length, the data runs to the end of the file.
  ASSERT_EQ(read(addModel("m.onnx.data", "16"), f), "");
  EXPECT_EQ(f.model.graph().initializer(0).raw_data(), floats());
  // In a subfolder of the model's.
  ASSERT_EQ(::mkdir(path("weights").c_str(), 0755), 0);
  write("weights/w.bin", floats());
  ASSERT_EQ(read(addModel("weights/w.bin"), f), "");
  EXPECT_EQ(f.model.graph().initializer(0).raw_data(), floats());
}

TEST_F(OnnxFileTest, RefusesExternalDataItCannotTrust) {
  write("w.bin", floats());
  const std::string w = "tensor 'w' ";
  const std::pair<onnx::ModelProto, std::string> cases[] = {
      {addModel("../w.bin"), w + "keeps its data in '../w.bin', outside the model's folder"},
      {addModel("/etc/passwd"), w + "keeps its data in '/etc/passwd', outside the model's folder"},
      {addModel("missing.bin"), "missing.bin: cannot read it: No such file or directory"},
      {addModel("w.bin", "0", "1000"), w + "takes 1000 bytes at 0 of "},
      {addModel("w.bin", "100"), w + "starts at byte 100 of "},
      {addModel("w.bin", "0", "12"), w + "has 12 bytes in "},
      {addModel("w.bin", "-1"), w + "has external data at offset '-1', not a byte count"},
      {addModel("w.bin", "", "1e3"), w + "has external data at length '1e3', not a byte count"},
  };
  for (const auto &[model, message] : cases) {
    OnnxFile f;
    const std::string problem = read(model, f);
    EXPECT_NE(problem.find(message), std::string::npos) << problem;
    EXPECT_EQ(problem.rfind(path("m.onnx") + ": ", 0), 0u) << problem;
  }
  // Bounded: the external data may not take more than the limit.
  OnnxLimits small;
  small.externalBytes = 8;
  OnnxFile f;
  EXPECT_NE(read(addModel("w.bin"), f, small).find("would take the external data read past 8"),
            std::string::npos);
  // A location that names no file at all.
  onnx::ModelProto noLocation = addModel("w.bin");
  noLocation.mutable_graph()->mutable_initializer(0)->mutable_external_data(0)->set_key("where");
  EXPECT_NE(read(noLocation, f).find("does not say which (no location)"), std::string::npos);
}

TEST_F(OnnxFileTest, RefusesWhatIsNoModel) {
  OnnxFile f;
  write("junk.onnx", std::string("\xff\xff\xff\xff not a protobuf", 20));
  EXPECT_EQ(readOnnxFile(path("junk.onnx"), f),
            path("junk.onnx") +
                ": not an ONNX model (its bytes do not parse as an ONNX ModelProto)");
  write("empty.onnx", "");
  EXPECT_EQ(readOnnxFile(path("empty.onnx"), f),
            path("empty.onnx") + ": not an ONNX model (it has no graph)");
  EXPECT_EQ(readOnnxFile(dir_, f), dir_ + ": not a regular file");
  ASSERT_EQ(::mkfifo(path("fifo.onnx").c_str(), 0600), 0);
  EXPECT_EQ(readOnnxFile(path("fifo.onnx"), f), path("fifo.onnx") + ": not a regular file");
  EXPECT_NE(readOnnxFile(path("none.onnx"), f).find("cannot read it: No such file"),
            std::string::npos);
  onnx::ModelProto noOpset = addModel("");
  noOpset.clear_opset_import();
  EXPECT_EQ(read(noOpset, f),
            path("m.onnx") + ": the model imports no opset of the default ONNX domain");
  OnnxLimits tiny;
  tiny.modelBytes = 10;
  EXPECT_NE(read(addModel(""), f, tiny).find("bytes, over the 10 a model file may have"),
            std::string::npos);
}

TEST_F(OnnxFileTest, ChecksWhatTheLibraryKnowsAndReadsNewerModels) {
  OnnxFile f;
  // Within the library's versions: ONNX's checker runs, and refuses an op it does not know.
  onnx::ModelProto unknown = addModel("");
  unknown.mutable_graph()->mutable_node(0)->set_op_type("NoSuchOp");
  EXPECT_NE(read(unknown, f).find("ONNX's checker refuses it: "), std::string::npos);
  // A newer model (PyTorch's default exporter: IR 10, opset 18) is read; the checker, which
  // would refuse its IR version, is left out and the importer's own rules apply.
  onnx::ModelProto newer = addModel("");
  newer.set_ir_version(10);
  newer.mutable_opset_import(0)->set_version(18);
  ASSERT_EQ(read(newer, f), "");
  EXPECT_FALSE(f.checked);
  EXPECT_EQ(f.opset, 18);
}

} // namespace
} // namespace dp::onnx_import
