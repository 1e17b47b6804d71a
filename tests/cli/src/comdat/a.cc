#include "s.h"

void S::init()
{
	g(this);
}

int main()
{
	S *s = new S;
	S *t = make_b();

	return s->x + t->x - 2;
}
