#pragma once
// NumPy archives: .npz files (a zip of .npy arrays, stored or deflate-compressed, as numpy.savez and
// numpy.savez_compressed write them) and the .npy format inside (version 1, 2 or 3; little-endian; C order).
// What a Python user exports a graph as; `--task node-classify --data FILE.npz` reads them (node_classify.hpp).
//
// write_npz writes what Planetoid-layout readers (node_classify.hpp, numpy.load) take.
//
// The zip is read from its central directory (not the local headers, whose sizes a streaming writer may leave
// out), each member inflated with zlib. Every malformed byte is a topo::Error naming the file, the member and
// what is wrong: a truncated archive, a member that is not .npy, an unsupported dtype ('>f4', object arrays),
// Fortran order, a shape whose element count does not match the bytes.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace topo::apps {

struct NpyArray {
  std::string dtype;                // numpy's descr without the byte order: "i8", "i4", "f4", "f8", "b1", "u1"
  std::vector<std::int64_t> shape;  // () for a scalar
  std::string bytes;                // the elements, C order, little-endian

  std::int64_t numel() const;
  std::int64_t item_size() const;
  // The elements as int64 (from i1/i2/i4/i8, u1/u2/u4, b1) or float (from f4/f8); another dtype is an error
  // naming `what` (e.g. "cora.npz: edge_index").
  std::vector<std::int64_t> as_int64(const std::string& what) const;
  // Element i of an integer array (i1..i8, u1..u8, b1) as int64, read in place (a big array need not be copied
  // whole); a u8 past int64 is an error naming `what`.
  std::int64_t int64_at(std::int64_t i, const std::string& what) const;
  std::vector<float> as_float(const std::string& what) const;
};

// One array to write: numpy's descr without the byte order ("i8", "f4", "b1"), the shape and the elements
// (C order, little-endian), which stay where they are (not copied).
struct NpyView {
  std::string name;  // the member's name without ".npy"
  std::string dtype;
  std::vector<std::int64_t> shape;
  const void* data = nullptr;
  std::size_t bytes = 0;
};

// Writes an .npz of stored (uncompressed) .npy members, as numpy.savez writes them (numpy.load and read_npz read
// it), atomically. Without zip64 the archive stays under 4 GiB: a bigger one is a topo::Error naming the array.
void write_npz(const std::string& path, const std::vector<NpyView>& arrays);

// One .npy file's bytes; `what` names it in errors. Taken by value: the elements are cut out in place.
NpyArray parse_npy(std::string bytes, const std::string& what);

// An .npz opened for its members one at a time: opening reads the central directory (the file's tail), read()
// one member's bytes, so a reader holds one array at a time and never the whole archive (a 1M-node graph's is
// 0.8 GiB). Each member read is checked (its CRC, its .npy header); a member never read is never checked.
class NpzReader {
 public:
  explicit NpzReader(std::string path);
  const std::string& path() const { return path_; }
  const std::vector<std::string>& names() const { return names_; }  // without ".npy", in the archive's order
  bool contains(const std::string& name) const { return members_.count(name) > 0; }
  // The member `name` (without ".npy"); an absent one is a topo::Error naming the archive and what it holds.
  NpyArray read(const std::string& name) const;

 private:
  struct Member {
    std::string file_name;  // as stored, with ".npy"
    std::uint64_t method = 0, crc = 0, compressed = 0, size = 0, local = 0;
  };
  std::string path_;
  std::uint64_t file_size_ = 0;
  std::vector<std::string> names_;
  std::map<std::string, Member> members_;
};

// Every member of an .npz, by name without ".npy".
std::map<std::string, NpyArray> read_npz(const std::string& path);

}  // namespace topo::apps
