#include <stdio.h>
#include <readline/readline.h>
#include <readline/history.h>

/* readline's stream for display (display.c, rlprivate.h; exported, not in the public headers):
   swapped for /dev/null on SIGWINCH, so readline lays the line out at the new width without
   drawing it again (see LineEditor.redrawAfterResize). */
extern FILE *_rl_out_stream;
