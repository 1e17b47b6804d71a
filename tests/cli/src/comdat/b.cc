#include "s.h"

S *make_b()
{
	return new S;
}
