// glibc's spawn file actions that Swift's Glibc module does not import (they need _GNU_SOURCE).
#ifndef CSPAWN_H
#define CSPAWN_H
#include <spawn.h>

/// Closes every descriptor from `from` up in the child (glibc 2.34).
int cspawn_addclosefrom(posix_spawn_file_actions_t *actions, int from);
/// Changes the child's directory before it runs (glibc 2.29).
int cspawn_addchdir(posix_spawn_file_actions_t *actions, const char *path);

#endif
