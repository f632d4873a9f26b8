// One unwind table for every file of the same content.
//
// The VMA tracker numbers files by (path, device, inode): /usr/bin/git and
// /usr/lib/git-core/git, a hard link and a copy of one binary are different file ids. Their CFI
// is the same, and so is their table: the loader finds the table by content identity
// (table_cache.h elf_table_identity: the hash of everything the compiler reads), compiles and
// writes its rows once, and gives each further file id an entry in the BPF file map that points
// at the same rows (the caller gives its inode an entry in the inode map). -v names the file it shares with.
#pragma once

#include <cstdint>
#include <string>

namespace ukstap::loader {

// Makes `file_id` use the table `twin_id` already has in the file map `files_fd`
// (stp_cfi_files). False with a one-line `why` when the twin has no entry or the map refuses
// the update. The file's inode key is the caller's to register, after this entry: a walk must
// not find the id before its entry.
bool share_table(int files_fd, uint32_t twin_id, uint32_t file_id, std::string& why);

// Maps the inode (user-space st_dev encoding; ino 0 or no map: nothing) to `file_id` in the
// inode map `inodes_fd` (stp_cfi_inodes), where the kernel's walk finds files it has no mirror
// entry for. `flags`: BPF_ANY, or BPF_NOEXIST to never replace a file's entry.
void register_inode(int inodes_fd, uint64_t dev, uint64_t ino, uint32_t file_id, uint64_t flags);

}  // namespace ukstap::loader
