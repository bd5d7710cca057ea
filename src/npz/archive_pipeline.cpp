#include "npz/archive_pipeline.hpp"

#include <vector>

#include "npz/central.hpp"
#include "npz/end_records.hpp"
#include "npz/local.hpp"
#include "npz/members.hpp"

namespace npyguard::npz::detail {

archive_result validate_archive(archive_reader& reader, const options& opts, member_sink* sink) {
  reader.set_minimal_reads(opts.minimal_reads);
  const auto where = locate_directory(reader, opts);
  if (!where.ok()) return where.failure();
  std::vector<entry> entries;
  if (auto failure = read_central_directory(reader, where.value(), opts, entries)) return *failure;
  if (auto failure = check_local_entries(reader, where.value(), entries)) return *failure;
  archive out;
  if (auto failure = validate_members(reader, entries, opts, out.members)) return *failure;
  const bool verify = opts.verify || sink != nullptr;
  if (verify) {
    if (auto failure = verify_members(reader, entries, out.members, sink)) return *failure;
  }
  out.size = reader.size();
  out.central_directory_offset = where.value().cd_offset;
  out.central_directory_size = where.value().cd_size;
  out.zip64 = where.value().zip64;
  out.verified = verify;
  out.bytes_read = reader.bytes_read();
  return out;
}

} // namespace npyguard::npz::detail
