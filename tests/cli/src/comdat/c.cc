#include "s.h"

void g(S *s)
{
	s->p = new int[10];
}
